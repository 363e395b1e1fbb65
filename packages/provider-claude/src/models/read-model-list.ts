import { binaryIdentity } from '../binary/checked-binaries.js';
import type { ClaudeTransport, ConnectionFactory } from '../connection/claude-connection.js';
import { type AgentModels, type ModelListRequest, askAgentForModels, modelListKey } from './list-models.js';
import { rememberedModelList } from './model-list-cache.js';
import { settingsFingerprint } from './settings-fingerprint.js';
import type { RunningAgents } from './running-agents.js';

/** Where a model list is read from: the agent as a session of this binary, transport and environment would start it. */
export interface ModelListSource extends Omit<ModelListRequest, 'connect'> {
  readonly transport: ClaudeTransport;
  /** The binary's version check: a refused binary is its error, and no agent is started. */
  readonly checkBinary: () => Promise<void>;
  /** The transport's connection factory, asked for once the binary passed its check. */
  readonly connector: () => ConnectionFactory | Promise<ConnectionFactory>;
  /** Told of each read that starts an agent (the provider lets them end before it is disposed). */
  readonly onRead?: (read: Promise<AgentModels>) => void;
  /** The provider's session agents: one of this binary, transport and environment is asked before any is started. */
  readonly runningAgents?: RunningAgents;
}

/** Bound on a running agent's answer (one still starting answers once its start-up is over); past it, one is started. */
const runningAgentTimeoutMs = 10_000;

/**
 * The agent's model list, as `listModels` and a model change (model-at-launch.ts) both read it: once
 * the binary passed its check, the list kept for this binary, transport and environment; else asked
 * of a session agent of theirs already running (running-agents.ts), or one short start of the agent
 * that reads it (model-list-cache.ts: at most one per environment).
 */
export async function readModelList(source: ModelListSource): Promise<AgentModels> {
  await source.checkBinary();
  const identity = binaryIdentity(source.binaryPath);
  const connect = await source.connector();
  const key =
    identity === null
      ? null
      : modelListKey(identity, source.transport, source.environment, settingsFingerprint(source.environment));
  return rememberedModelList(key, () => {
    const began = Date.now();
    const asked =
      identity !== null && key !== null
        ? source.runningAgents?.askForModels(
            { binaryPath: source.binaryPath, identity, key },
            Math.min(source.timeoutMs, runningAgentTimeoutMs),
          )
        : null;
    if (!asked) return startAndAsk(source, connect);
    // What the running agent took of the bound is gone: the read as a whole keeps to modelListTimeoutMs.
    return asked.catch(() =>
      startAndAsk({ ...source, timeoutMs: Math.max(1, source.timeoutMs - (Date.now() - began)) }, connect),
    );
  });
}

/** One short start of the agent, only to ask it the list. */
function startAndAsk(source: ModelListSource, connect: ConnectionFactory): Promise<AgentModels> {
  const read = askAgentForModels({
    connect,
    binaryPath: source.binaryPath,
    environment: source.environment,
    timeoutMs: source.timeoutMs,
    signal: source.signal,
  });
  source.onRead?.(read);
  return read;
}
