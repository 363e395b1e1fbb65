import { readModelList } from '../models/read-model-list.js';
import type { ClaudeSessionSettings } from './claude-session-settings.js';

/** Bound on reading the model list for a model change; past it the name is reported as given. */
const modelListTimeoutMs = 30_000;

/**
 * The model an agent launched with `model` will use: an alias the agent's model list names (`default`
 * included) as what it resolves to, any other name as given (the CLI takes it as it is). The list is
 * the one `listModels` reads, kept per binary and environment for the whole process, so it is read
 * (one short start of the agent, beside the sessions) at most once per environment. When it cannot be
 * read, the name as given: the agent reports the model it uses once it starts.
 */
export async function modelAtLaunch(
  model: string,
  settings: ClaudeSessionSettings,
  environment: Record<string, string>,
  signal: AbortSignal,
): Promise<string> {
  try {
    const { models } = await readModelList({
      transport: settings.transport,
      checkBinary: settings.checkBinary,
      connector: () => settings.connect,
      runningAgents: settings.runningAgents,
      binaryPath: settings.binaryPath,
      environment,
      timeoutMs: modelListTimeoutMs,
      signal,
    });
    return models.find((entry) => entry.id === model)?.resolvedModel ?? model;
  } catch {
    return model;
  }
}
