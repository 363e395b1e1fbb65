import type { ModelList } from '@tether/protocol';
import type { AgentProviderV1Availability } from './provider-availability.js';
import type { AgentProviderV1Capabilities } from './provider-capabilities.js';
import type {
  AgentProviderV1Session,
  AgentProviderV1SessionOptions,
  AgentProviderV1StopOptions,
} from './provider-session.js';

/**
 * The contract between the runtime and an agent provider (Claude Code today). Methods are
 * prefixed with `do` because only the runtime calls them; hosts talk to the runtime.
 */
export interface AgentProviderV1 {
  readonly specificationVersion: 'agent-provider-v1';
  /** The name hosts pass as `provider` in open_session, e.g. "claude". */
  readonly name: string;
  readonly capabilities: AgentProviderV1Capabilities;
  /** Finds the agent and asks its version, bounded by a timeout. Never throws. */
  doProbe(options?: { timeoutMs?: number }): Promise<AgentProviderV1Availability>;
  /**
   * Prepares a session without starting any process (that happens on the first turn).
   * Throws an AgentError (e.g. provider_unavailable) when the session cannot work at all.
   */
  doOpenSession(options: AgentProviderV1SessionOptions): Promise<AgentProviderV1Session>;
  /**
   * After a crash of the previous runtime: ends whatever its agent processes left running. The
   * records come from `session.process_started` events of sessions whose process was never seen to
   * stop. Must only touch processes it can prove are those (pid reuse is real). Optional.
   */
  doRecover?(processes: readonly AgentProviderV1ProcessRecord[]): Promise<void>;
  /**
   * Makes ready, ahead of any session, what starting a session's agent would otherwise wait for
   * (Claude: the connections its processes' output is read through, and its output reading run once
   * on a recorded turn so a first turn does not pay for code running for the first time). The runtime
   * awaits it while it starts, so a host's first session does not. Never rejects: what could not be
   * prepared is made, or done without, when the agent starts. Starts no agent process. Optional.
   */
  doPrepare?(): Promise<void>;
  /**
   * The agent's model list (capabilities.modelList). May start the agent once to ask it; the
   * provider keeps the answer per agent version. Throws an AgentError (provider_unavailable) when
   * the agent cannot be asked.
   */
  doListModels?(): Promise<ModelList>;
  /**
   * Ends whatever the provider keeps outside sessions (e.g. spare processes). Called by the runtime
   * on shutdown, with `force` when the host must exit now (a second signal, a bounded shutdown):
   * then nothing gets a graceful wait, as in a forced doStop. Optional, and so is the option.
   */
  doDispose?(options?: AgentProviderV1StopOptions): Promise<void>;
}

/** What a `session.process_started` event recorded about an agent process. */
export interface AgentProviderV1ProcessRecord {
  readonly pid: number;
  readonly startTime: number | null;
  readonly marker: string;
}
