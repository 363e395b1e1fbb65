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
    const read = readModelList({
      transport: settings.transport,
      checkBinary: settings.checkBinary,
      connector: () => settings.connect,
      runningAgents: settings.runningAgents,
      binaryPath: settings.binaryPath,
      environment,
      timeoutMs: modelListTimeoutMs,
      // Another asker (GET /models, another session's change) may share this read: the session's end
      // only stops it waiting, and the read ends with the provider.
      signal: settings.modelListReads?.signal ?? signal,
      ...(settings.modelListReads ? { onRead: settings.modelListReads.onRead } : {}),
    });
    const { models } = await untilAborted(read, signal);
    return models.find((entry) => entry.id === model)?.resolvedModel ?? model;
  } catch {
    return model;
  }
}

/** `promise`, or a rejection as soon as `signal` aborts (the promise itself goes on). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(signal.reason);
    signal.addEventListener('abort', abort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
  });
}
