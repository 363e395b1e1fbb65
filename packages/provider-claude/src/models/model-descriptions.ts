import { ModelDescription } from '@tether/protocol';

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** One entry of the initialize answer's `models` (the SDK's ModelInfo) as a picker describes it; undefined if unusable. */
function describeModel(entry: unknown): ModelDescription | undefined {
  // `list_models` also lists the rows the account or a policy disables (`disabled: true`, shown but not
  // selectable in Claude Code's picker); `initialize` leaves them out. Neither can be chosen.
  if (!isObject(entry) || typeof entry.value !== 'string' || entry.disabled === true) return undefined;
  const effortLevels = Array.isArray(entry.supportedEffortLevels)
    ? entry.supportedEffortLevels.filter((level): level is string => typeof level === 'string')
    : [];
  const description = ModelDescription.safeParse({
    id: entry.value,
    displayName: typeof entry.displayName === 'string' ? entry.displayName : entry.value,
    description: typeof entry.description === 'string' ? entry.description : '',
    resolvedModel: typeof entry.resolvedModel === 'string' ? entry.resolvedModel : null,
    effortLevels,
    supportsFastMode: entry.supportsFastMode === true,
    supportsAdaptiveThinking: entry.supportsAdaptiveThinking === true,
    supportsAutoMode: entry.supportsAutoMode === true,
  });
  return description.success ? description.data : undefined;
}

/**
 * The models of the agent's initialize answer (`models`, the list the Agent SDK's supportedModels()
 * returns), and the version of the agent that answered (`claude_code_version`). Entries that cannot
 * be described (no `value`, or beyond the protocol's bounds) are left out.
 */
export function modelsOfInitializeAnswer(answer: unknown): {
  readonly models: ModelDescription[];
  readonly agentVersion: string | null;
} {
  const record = isObject(answer) ? answer : {};
  const entries = Array.isArray(record.models) ? record.models : [];
  return {
    models: entries.flatMap((entry) => describeModel(entry) ?? []),
    agentVersion: typeof record.claude_code_version === 'string' ? record.claude_code_version : null,
  };
}
