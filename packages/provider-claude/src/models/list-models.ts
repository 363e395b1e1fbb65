import { createHash, randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import os from 'node:os';
import { AgentError, type ModelDescription } from '@tether/protocol';
import {
  type ClaudeConnection,
  type ConnectionEnding,
  type ConnectionFactory,
  processExitOf,
} from '../connection/claude-connection.js';
import { createCreatorNamedFolder } from '../process/creator-named-folders.js';
import { modelsOfInitializeAnswer } from './model-descriptions.js';

/** The empty folder a model list's agent runs in (named for its host: the next host's start-up sweep removes one a kill left). */
export const modelListFolderPrefix = 'tether-models-';

export interface ModelListRequest {
  /** The transport's connection factory: the list is read the way a session would talk to the agent. */
  readonly connect: ConnectionFactory;
  readonly binaryPath: string;
  /** The child's whole environment, built as a session's is (its HOME's settings can shape the list). */
  readonly environment: Record<string, string>;
  /** Bound on the agent's answer; the process is ended either way. */
  readonly timeoutMs: number;
  /** Ends the agent at once (the provider is being disposed: the host is exiting); the read then fails. */
  readonly signal?: AbortSignal;
}

export interface AgentModels {
  readonly models: ModelDescription[];
  readonly agentVersion: string | null;
}

const ignore = () => undefined;

/**
 * Starts the agent once, in an empty temporary folder and keeping no conversation, asks it the
 * initialize request (its answer lists the models, built into the CLI: no API call is made; on the sdk
 * transport this is the answer the SDK's supportedModels() reads), and ends it. A failure, or an answer
 * listing no model, is provider_unavailable: the list is never silently empty.
 */
export async function askAgentForModels(request: ModelListRequest): Promise<AgentModels> {
  // Nothing is started for a host on its way out: an agent started after its provider's disposal would outlive it.
  if (request.signal?.aborted) throw disposedBeforeStart(request.binaryPath);
  const cwd = await createCreatorNamedFolder(modelListFolderPrefix);
  let ending: ConnectionEnding | undefined;
  let connection: ClaudeConnection | undefined;
  const stopAtOnce = () => void connection?.stop({ busy: true, force: true });
  request.signal?.addEventListener('abort', stopAtOnce, { once: true });
  try {
    connection = request.connect(
      {
        configuration: {},
        conversation: { kind: 'new', providerSessionId: randomUUID() },
        ephemeral: true,
        background: true,
        cwd,
        environment: request.environment,
      },
      {
        onFrame: ignore,
        onNote: ignore,
        // Nothing is asked of a process that runs no turn; a prompt would wait for nobody.
        onPrompt: ignore,
        onPromptWithdrawn: ignore,
        onInputFailed: ignore,
        onEnd: (end) => {
          ending = end;
        },
      },
    );
    // Disposed while the folder was made: the agent just started is ended at once, and the read fails.
    if (request.signal?.aborted) stopAtOnce();
    runInBackground(connection.process?.pid);
    const answer = await connection.request({ subtype: 'initialize' }, { timeoutMs: request.timeoutMs });
    const listed = modelsOfInitializeAnswer(answer);
    if (listed.models.length === 0) {
      throw new AgentError({
        code: 'provider_unavailable',
        message:
          'Could not read the model list: the claude CLI answered without any model. Update the claude CLI; a model name can still be typed.',
        details: { reason: 'model_list_empty', binaryPath: request.binaryPath },
      });
    }
    return listed;
  } catch (error) {
    if (AgentError.isInstance(error) && error.code === 'provider_unavailable') throw error;
    // Stopped first (at once: it failed us): the sdk transport learns how its process ended only after its stream closed.
    await connection?.stop({ busy: true });
    throw failure(request.binaryPath, error, ending);
  } finally {
    request.signal?.removeEventListener('abort', stopAtOnce);
    await connection?.stop({ busy: false });
    await rm(cwd, { recursive: true, force: true });
  }
}

/**
 * The list is read beside sessions (a web page's new-session form, a loaded ACP session, a session's
 * agent starting with no agent of the provider to ask): at the lowest CPU priority its start-up never
 * slows a session's agent on a small machine, and on an idle one it runs as fast as before.
 */
function runInBackground(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    os.setPriority(pid, os.constants.priority.PRIORITY_LOW);
  } catch {
    // Gone already, or not ours to change: it runs at its own priority.
  }
}

function disposedBeforeStart(binaryPath: string): AgentError {
  return new AgentError({
    code: 'provider_unavailable',
    message: 'The model list was not read: its host is shutting down. Ask again once it has started again.',
    details: { reason: 'provider_disposed', binaryPath },
  });
}

const advice =
  'Check that the claude CLI starts in this environment (opening a session shows why it does not), then ask again; a model name can still be typed.';

function failure(binaryPath: string, error: unknown, ending: ConnectionEnding | undefined): AgentError {
  const timedOut = AgentError.isInstance(error) && error.details?.reason === 'control_timeout';
  const exit = ending ? processExitOf(ending) : undefined;
  const spawnFailed = ending?.kind === 'spawn_failed' ? ending : undefined;
  const what = timedOut
    ? 'it did not answer in time'
    : spawnFailed
      ? 'it could not be started'
      : exit
        ? 'it exited before it answered'
        : 'it could not be asked';
  return new AgentError({
    code: 'provider_unavailable',
    message: `Could not read the model list from the claude CLI: ${what}. ${advice}`,
    details: {
      reason: timedOut
        ? 'model_list_timeout'
        : spawnFailed
          ? 'spawn_failed'
          : exit
            ? 'agent_exited'
            : 'model_list_failed',
      binaryPath,
      ...(spawnFailed?.errorCode ? { systemErrorCode: spawnFailed.errorCode } : {}),
      ...(exit && !timedOut ? { exitCode: exit.exitCode, signal: exit.signal } : {}),
    },
    cause: error,
  });
}

/**
 * Set in the host's own environment by the Agent SDK's first query() (and given to every agent it
 * starts either way): an environment read before that call and one read after it are the same to the list.
 */
const setByTheAgentSdk = new Set(['CLAUDE_AGENT_SDK_VERSION']);

/**
 * What a model list is kept under: the same binary file, transport, environment and settings files
 * (`settings`: settingsFingerprint of the environment, now or when an agent started) give the same list.
 */
export function modelListKey(
  identity: string,
  transport: string,
  environment: Record<string, string>,
  settings: string,
): string {
  const variables = Object.entries(environment)
    .filter(([name]) => !setByTheAgentSdk.has(name))
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return createHash('sha256')
    .update(JSON.stringify([identity, transport, variables, settings]))
    .digest('hex');
}
