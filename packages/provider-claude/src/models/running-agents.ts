import { readFileSync } from 'node:fs';
import path from 'node:path';
import { binaryIdentity, checkedVersion } from '../binary/checked-binaries.js';
import type {
  ClaudeConnection,
  ClaudeControlRequest,
  ConnectionFactory,
  ConnectionListener,
  LaunchPlan,
} from '../connection/claude-connection.js';
import { type AgentModels, modelListKey } from './list-models.js';
import { modelsOfInitializeAnswer } from './model-descriptions.js';
import { settingsFingerprint } from './settings-fingerprint.js';

interface RunningAgent {
  /** The binary file it was started from (one replaced since lists what the new one may not). */
  readonly identity: string | null;
  /** The settings files as they were at its start (settingsFingerprint): one edited since makes a list it cannot give. */
  readonly settings: string;
  readonly plan: LaunchPlan;
  /** A model was set on it live: its list now carries that model's row when the list lacks it. */
  modelSet: boolean;
}

/**
 * The session agents a provider has running, so that a model list can be asked of one of them
 * instead of starting an agent only to read it: on a small machine that start (~1 s of CPU) competes
 * with the session's own. Claude Code builds the list into the binary and shapes it with its
 * environment (the user's and managed settings, the variables), and also with the model the agent
 * runs on: a model the built-in rows lack (`--model my-model`, `opusplan`, a `model` in the folder's
 * project settings, a live `set_model`) is added as a row of its own (2.1.332, checked against the
 * binary). So only an agent that runs on the default model is asked: started without a model, an
 * agent definition or a settings file of its own, in a folder whose project settings set no model and
 * no variables, and not given a model since. Parked spares and the model list's own agents are not
 * asked either.
 */
export class RunningAgents {
  readonly #agents = new Map<ClaudeConnection, RunningAgent>();

  /** `connect`, with every session agent it starts that may answer for the list known here until it ends. */
  tracking(binaryPath: string, connect: ConnectionFactory): ConnectionFactory {
    return (plan, listener) => {
      const { configuration } = plan;
      if (
        plan.background ||
        plan.awaitClaim ||
        configuration.settingsPath !== undefined ||
        configuration.agent !== undefined ||
        (configuration.model !== undefined && configuration.model !== 'default')
      )
        return connect(plan, listener);
      let connection: ClaudeConnection | undefined;
      const forget = () => {
        if (connection) this.#agents.delete(connection);
      };
      connection = connect(plan, endingWith(forget, listener));
      if (!connection.running) return connection;
      const agent: RunningAgent = {
        identity: binaryIdentity(binaryPath),
        settings: settingsFingerprint(plan.environment),
        plan,
        modelSet: false,
      };
      this.#agents.set(connection, agent);
      return noticingModelChanges(connection, agent);
    };
  }

  /**
   * The model list from a running agent started with the binary file, transport, environment and
   * settings the list is kept under (`key`: modelListKey), asked `list_models` (answered beside
   * whatever it is doing), or null when none may answer. Fails when the agent does not answer within
   * `timeoutMs` or ends first: the caller then starts one of its own.
   */
  askForModels(
    list: { readonly binaryPath: string; readonly identity: string; readonly key: string },
    timeoutMs: number,
  ): Promise<AgentModels> | null {
    const { binaryPath, identity, key } = list;
    for (const [connection, agent] of this.#agents) {
      if (!connection.running || agent.modelSet || agent.identity !== identity) continue;
      // Hashed here, not at its start: asks are rare, and an agent's start is on a cold turn's path.
      if (modelListKey(identity, connection.transport, agent.plan.environment, agent.settings) !== key) continue;
      if (projectSettingsAbove(agent.plan.cwd, agent.plan.environment.HOME)) continue;
      return connection.request({ subtype: 'list_models' }, { timeoutMs }).then((answer) => {
        const listed = modelsOfInitializeAnswer(answer);
        if (listed.models.length === 0) throw new Error('the running agent listed no model');
        return { models: listed.models, agentVersion: listed.agentVersion ?? checkedVersion(binaryPath) };
      });
    }
    return null;
  }
}

/**
 * Whether project settings Claude Code may read (`.claude/settings.json` or `settings.local.json`, in
 * the agent's folder or one above it; the user's own under HOME excepted) could add a row: one that
 * sets a `model` or variables (`env`), or that cannot be read. Checked only when a list is asked for.
 */
function projectSettingsAbove(cwd: string, home: string | undefined): boolean {
  for (let folder = path.resolve(cwd); ; folder = path.dirname(folder)) {
    if (folder !== home) {
      for (const name of ['settings.json', 'settings.local.json']) {
        if (mayShapeTheList(path.join(folder, '.claude', name))) return true;
      }
    }
    if (path.dirname(folder) === folder) return false;
  }
}

function mayShapeTheList(settingsFile: string): boolean {
  let text: string;
  try {
    text = readFileSync(settingsFile, 'utf8');
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ENOENT';
  }
  try {
    const settings: unknown = JSON.parse(text);
    return typeof settings !== 'object' || settings === null || 'model' in settings || 'env' in settings;
  } catch {
    return true;
  }
}

/** `connection`, marking `agent` once a model is set on it live. */
function noticingModelChanges(connection: ClaudeConnection, agent: RunningAgent): ClaudeConnection {
  const request = connection.request.bind(connection);
  return Object.assign(connection, {
    request(controlRequest: ClaudeControlRequest, options?: { readonly timeoutMs?: number }) {
      if (controlRequest.subtype === 'set_model') agent.modelSet = true;
      return request(controlRequest, options);
    },
  });
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
