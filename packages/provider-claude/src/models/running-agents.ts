import { binaryIdentity, checkedVersion } from '../binary/checked-binaries.js';
import type {
  ClaudeConnection,
  ClaudeTransport,
  ConnectionFactory,
  ConnectionListener,
  LaunchPlan,
} from '../connection/claude-connection.js';
import { type AgentModels, modelListKey } from './list-models.js';
import { modelsOfInitializeAnswer } from './model-descriptions.js';

interface RunningAgent {
  readonly binaryPath: string;
  readonly plan: LaunchPlan;
}

/**
 * The session agents a provider has running, so that a model list can be asked of one of them
 * instead of starting an agent only to read it: on a small machine that start (~1 s of CPU) competes
 * with the session's own. The list is built into the binary and shaped only by its environment (the
 * user's and managed settings, the variables): not by the folder, the model or the mode an agent was
 * started with (../shared/claude-cli-protocol-wave2.md §6; checked against 2.1.332). A settings file
 * given to the agent (`--settings`) can shape it, so such an agent is never asked. Parked spares and
 * the model list's own agents are not asked either: a spare waits for its claim, not for questions.
 */
export class RunningAgents {
  readonly #agents = new Map<ClaudeConnection, RunningAgent>();

  /** `connect`, with every session agent it starts known here until it ends. */
  tracking(binaryPath: string, connect: ConnectionFactory): ConnectionFactory {
    return (plan, listener) => {
      if (plan.background || plan.awaitClaim || plan.configuration.settingsPath !== undefined)
        return connect(plan, listener);
      let connection: ClaudeConnection | undefined;
      const forget = () => {
        if (connection) this.#agents.delete(connection);
      };
      connection = connect(plan, endingWith(forget, listener));
      if (connection.running) this.#agents.set(connection, { binaryPath, plan });
      return connection;
    };
  }

  /**
   * The model list from a running agent of this binary, transport and environment (`list_models`,
   * answered beside whatever it is doing), or null when none runs. Fails when the agent does not
   * answer within `timeoutMs` or ends first: the caller then starts one of its own.
   */
  askForModels(
    binaryPath: string,
    transport: ClaudeTransport,
    environment: Record<string, string>,
    timeoutMs: number,
  ): Promise<AgentModels> | null {
    const identity = binaryIdentity(binaryPath);
    if (identity === null) return null;
    const key = modelListKey(identity, transport, environment);
    for (const [connection, agent] of this.#agents) {
      if (!connection.running || agent.binaryPath !== binaryPath) continue;
      if (modelListKey(identity, transport, agent.plan.environment) !== key) continue;
      return connection.request({ subtype: 'list_models' }, { timeoutMs }).then((answer) => {
        const listed = modelsOfInitializeAnswer(answer);
        if (listed.models.length === 0) throw new Error('the running agent listed no model');
        return { models: listed.models, agentVersion: listed.agentVersion ?? checkedVersion(binaryPath) };
      });
    }
    return null;
  }
}

/** `listener`, calling `onEnd` first: the agent is forgotten before anyone hears it ended. */
function endingWith(onEnd: () => void, listener: ConnectionListener): ConnectionListener {
  return {
    onFrame: (frame) => listener.onFrame(frame),
    onNote: (code) => listener.onNote(code),
    onPrompt: (requestId, request) => listener.onPrompt(requestId, request),
    onPromptWithdrawn: (requestId) => listener.onPromptWithdrawn(requestId),
    onInputFailed: () => listener.onInputFailed(),
    onEnd: (ending) => {
      onEnd();
      listener.onEnd(ending);
    },
  };
}
