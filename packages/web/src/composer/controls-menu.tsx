import { type FormEvent, useId, useState } from 'react';
import { PermissionMode, type ProviderCapabilities } from '@tether/protocol';
import { permissionModeLabels } from '../format/format-values.js';
import { type ChosenMode, chooseMode, shownMode } from './chosen-mode.js';
import { ModelOptions } from '../models/model-options.js';
import { useModelList } from '../models/use-model-list.js';

export interface ControlsMenuProps {
  /** The session's provider: whose models the model field offers. */
  readonly provider: string | null;
  readonly capabilities: ProviderCapabilities | undefined;
  readonly busy: boolean;
  readonly currentMode: PermissionMode | null;
  /** Modes the running agent cannot enter live: choosing one restarts it (never during a run). */
  readonly modesRequiringRestart: readonly PermissionMode[];
  readonly onControl: (name: 'compact' | 'clear' | 'cost' | 'context') => void;
  readonly onSetModel: (model: string) => void;
  readonly onSetMode: (mode: PermissionMode, restart: boolean) => void;
}

const controlButtons = [
  { name: 'compact', label: 'Compact', description: 'Compact the conversation' },
  { name: 'clear', label: 'Clear', description: 'Clear the conversation context' },
  { name: 'cost', label: 'Cost', description: 'Show the cost report' },
  { name: 'context', label: 'Context', description: 'Show context usage' },
] as const;

function modeLabel(mode: PermissionMode): string {
  return permissionModeLabels[mode] ?? mode;
}

/**
 * Slash-command controls and settings, offered only where the session's provider supports them. A
 * mode the running agent cannot enter live says so in the list, and choosing it offers the restart
 * (the agent stops now and starts again in that mode with the next turn) instead of failing.
 */
export function ControlsMenu({
  provider,
  capabilities,
  busy,
  currentMode,
  modesRequiringRestart,
  onControl,
  onSetModel,
  onSetMode,
}: ControlsMenuProps) {
  const [model, setModel] = useState('');
  // The session's own mode, as it changes, unless one was picked here since (see shownMode).
  const [chosen, setChosen] = useState<ChosenMode | null>(null);
  const mode = shownMode(chosen, currentMode);
  const setMode = (next: PermissionMode) => setChosen(chooseMode(next, currentMode));
  const modelListId = useId();
  const models = useModelList(provider ?? undefined, provider !== null && capabilities?.modelList === true);
  if (capabilities === undefined || !(capabilities.controls || capabilities.setModel || capabilities.setMode))
    return null;
  const submitModel = (event: FormEvent) => {
    event.preventDefault();
    if (model.trim() !== '') onSetModel(model.trim());
  };
  const restart = modesRequiringRestart.includes(mode);
  const submitMode = (event: FormEvent) => {
    event.preventDefault();
    onSetMode(mode, restart);
  };
  return (
    <details
      className="controls-menu"
      onToggle={(event) => {
        // On a phone the menu opens in a scrolled area below the conversation: bring it into view.
        if (event.currentTarget.open) event.currentTarget.scrollIntoView({ block: 'nearest' });
      }}
    >
      <summary>Controls</summary>
      <div className="controls-menu-body">
        {capabilities.controls ? (
          <fieldset className="controls-row" aria-label="Session controls">
            {controlButtons.map((control) => (
              <button
                key={control.name}
                type="button"
                disabled={busy}
                aria-label={control.description}
                onClick={() => onControl(control.name)}
              >
                {control.label}
              </button>
            ))}
          </fieldset>
        ) : null}
        {capabilities.setModel ? (
          <form className="controls-row" onSubmit={submitModel}>
            <input
              type="text"
              aria-label="Model"
              placeholder="Model, e.g. sonnet"
              value={model}
              list={modelListId}
              autoComplete="off"
              spellCheck={false}
              onChange={(event) => setModel(event.target.value)}
            />
            <ModelOptions id={modelListId} models={models} />
            <button type="submit" disabled={model.trim() === ''}>
              Set model
            </button>
          </form>
        ) : null}
        {capabilities.setMode ? (
          <form className="controls-row" onSubmit={submitMode}>
            <select
              aria-label="Permission mode"
              value={mode}
              onChange={(event) => setMode(PermissionMode.parse(event.target.value))}
            >
              {PermissionMode.options.map((option) => (
                <option key={option} value={option}>
                  {modesRequiringRestart.includes(option)
                    ? `${modeLabel(option)} (restarts the agent)`
                    : modeLabel(option)}
                </option>
              ))}
            </select>
            <button type="submit" disabled={restart && busy}>
              {restart ? `Restart in ${modeLabel(mode)}` : 'Set mode'}
            </button>
            {restart ? (
              <p className="controls-note" role="note">
                The running agent cannot switch to {modeLabel(mode)}. Restarting stops it now and starts it again in{' '}
                {modeLabel(mode)} with your next turn; the conversation continues.{' '}
                {busy ? 'Available once the run ends.' : ''}
              </p>
            ) : null}
          </form>
        ) : null}
      </div>
    </details>
  );
}
