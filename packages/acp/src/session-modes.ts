import type {
  SessionConfigOption,
  SessionConfigSelectOption,
  SessionMode,
  SessionModeState,
} from '@agentclientprotocol/sdk';
import { type ModelDescription, type ModelList, PermissionMode, type SessionSnapshot } from '@tether/protocol';

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

/** Tether's name for the provider's own default model (set_model takes it to go back to it). */
const defaultModel = 'default';

/**
 * The model option's value a client chose, and the model the set answered it resolves to (null while
 * the set is under way): it reads as chosen while that is the model in effect, list or no list.
 */
export interface ChosenModel {
  readonly value: string;
  readonly resolved: string | null;
}

/**
 * The model in effect as a value of the model option: the value this client chose while it is still
 * the model in effect (Tether records the model an alias resolves to, and several aliases may resolve
 * to one model: "opus" and "default", say), else the model the session was given or set to when the
 * list names it, else the alias the agent's reported model resolves from, else that model as named
 * (Claude Code takes any id: one the list lacks is still the model in effect), else the provider's default.
 */
function modelInEffect(
  snapshot: SessionSettings,
  listed: readonly ModelDescription[],
  chosen: ChosenModel | null,
): string {
  const configured = typeof snapshot.configuration.model === 'string' ? snapshot.configuration.model : null;
  if (chosen !== null) {
    // While the set is under way (no answer yet) the choice is what the session is changing to.
    if (chosen.resolved === null) return chosen.value;
    const inEffect = snapshot.model ?? configured;
    const resolvedNames = [
      chosen.value,
      chosen.resolved,
      listed.find((model) => model.id === chosen.value)?.resolvedModel,
    ];
    if (inEffect !== null && resolvedNames.includes(inEffect)) return chosen.value;
  }
  const named = [configured, snapshot.model].find((model) => listed.some((listedModel) => listedModel.id === model));
  if (named) return named;
  const resolving = listed.find((model) => snapshot.model !== null && model.resolvedModel === snapshot.model);
  return resolving?.id ?? configured ?? snapshot.model ?? defaultModel;
}

/**
 * The session's config options: its permission mode and its model. The model option lists the
 * agent's models once they are known (`models`; null while they are being read, or when the agent
 * cannot list them) and always holds the model in effect, so a client sees the model the session
 * runs and can ask for another as soon as the session is answered. There is none when the model
 * can neither be listed nor set. `chosenModel` is the model option's value this client last chose.
 */
export function configOptions(
  snapshot: SessionSettings,
  models: ModelList | null,
  modelSettable: boolean,
  chosenModel: ChosenModel | null = null,
): SessionConfigOption[] {
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
  const listed = models?.models ?? [];
  if (listed.length === 0 && !modelSettable) return options;
  const choices: SessionConfigSelectOption[] =
    listed.length > 0
      ? listed.map((model) => ({ value: model.id, name: model.displayName, description: model.description }))
      : [{ value: defaultModel, name: 'Default', description: "The agent's default model" }];
  const current = modelInEffect(snapshot, listed, chosenModel);
  if (!choices.some((choice) => choice.value === current)) choices.push({ value: current, name: current });
  options.push({
    id: modelOptionId,
    name: 'Model',
    category: 'model',
    type: 'select',
    currentValue: current,
    options: choices,
  });
  return options;
}
