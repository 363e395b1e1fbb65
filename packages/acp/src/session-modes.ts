import type { SessionConfigOption, SessionMode, SessionModeState } from '@agentclientprotocol/sdk';
import { type ModelList, PermissionMode, type SessionSnapshot } from '@tether/protocol';

const modeNames: Record<PermissionMode, { name: string; description: string }> = {
  plan: { name: 'Plan', description: 'Read and plan; no edits or commands until the plan is approved' },
  ask_before_edit: { name: 'Ask before edits', description: 'Ask before editing files or running commands' },
  auto_edit: { name: 'Accept edits', description: 'Edit files without asking; ask before commands' },
  auto: { name: 'Auto', description: 'The agent decides what needs asking (models that support it)' },
  dont_ask: { name: "Don't ask", description: 'Never ask: deny whatever is not allowed already' },
  bypass: { name: 'Bypass permissions', description: 'Run everything without asking' },
};

/** Claude Code starts in its default mode when the session names none and before it reports one. */
const assumedMode: PermissionMode = 'ask_before_edit';

/** What of a session its modes and options are read from. */
export type SessionSettings = Pick<
  SessionSnapshot,
  'configuration' | 'permissionMode' | 'modesRequiringRestart' | 'model'
>;

export function currentMode(snapshot: SessionSettings): PermissionMode {
  const configured = PermissionMode.safeParse(snapshot.configuration.permissionMode);
  return snapshot.permissionMode ?? (configured.success ? configured.data : assumedMode);
}

/** The permission modes as ACP modes; one the running agent cannot enter live says it restarts it. */
export function sessionModes(snapshot: SessionSettings): SessionModeState {
  const availableModes: SessionMode[] = PermissionMode.options.map((mode) => ({
    id: mode,
    name: modeNames[mode].name,
    description: snapshot.modesRequiringRestart.includes(mode)
      ? `${modeNames[mode].description} (restarts the agent between turns)`
      : modeNames[mode].description,
  }));
  return { currentModeId: currentMode(snapshot), availableModes };
}

export const modeOptionId = 'mode';
export const modelOptionId = 'model';

/**
 * The session's config options: its permission mode and, when the agent lists its models, its
 * model (the model in effect is matched to the alias that resolves to it).
 */
export function configOptions(snapshot: SessionSettings, models: ModelList | null): SessionConfigOption[] {
  const modes = sessionModes(snapshot);
  const options: SessionConfigOption[] = [
    {
      id: modeOptionId,
      name: 'Mode',
      category: 'mode',
      type: 'select',
      currentValue: modes.currentModeId,
      options: modes.availableModes.map((mode) => ({
        value: mode.id,
        name: mode.name,
        description: mode.description ?? null,
      })),
    },
  ];
  if (models && models.models.length > 0) {
    const inEffect = snapshot.model;
    const current =
      models.models.find((model) => model.id === inEffect || (inEffect !== null && model.resolvedModel === inEffect)) ??
      models.models.find((model) => model.id === 'default') ??
      models.models[0];
    const choices = models.models.map((model) => ({
      value: model.id,
      name: model.displayName,
      description: model.description,
    }));
    options.push({
      id: modelOptionId,
      name: 'Model',
      category: 'model',
      type: 'select',
      currentValue: current?.id ?? choices[0]!.value,
      options: choices,
    });
  }
  return options;
}
