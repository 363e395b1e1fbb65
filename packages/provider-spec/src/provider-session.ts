import type {
  ContextUsage,
  ControlName,
  InputPart,
  InteractionAnswer,
  PermissionMode,
  SessionConfiguration,
  Workspace,
} from '@tether/protocol';
import type { AgentProviderV1Part } from './provider-part.js';

export interface AgentProviderV1SessionOptions {
  /** Tether's session id (for diagnostics and process markers, not the provider's own id). */
  readonly sessionId: string;
  readonly workspace: Workspace;
  readonly configuration: SessionConfiguration;
  /** Keep no resumable conversation on the provider side. */
  readonly ephemeral: boolean;
  /**
   * The provider conversation to continue, decided by the runtime from stored state;
   * null starts a new conversation. Never inferred from the mere presence of an id.
   */
  readonly resumeProviderSessionId: string | null;
  /** Receives every part the session produces, synchronously and in order. */
  readonly emit: (part: AgentProviderV1Part) => void;
}

export interface AgentProviderV1Turn {
  readonly runId: string;
  readonly input: readonly InputPart[];
}

export interface AgentProviderV1Control {
  readonly runId: string;
  readonly name: ControlName;
  readonly argument?: string;
}

export type AgentProviderV1StopReason = 'close' | 'release';

export interface AgentProviderV1StopOptions {
  /**
   * The host must exit now (a signal, a bounded shutdown): end the agent at once, with no graceful
   * wait (the Claude provider sends SIGKILL to the process group and sweeps what it left).
   */
  readonly force?: boolean;
}

/**
 * One conversation with an agent. The runtime calls at most one doTurn at a time and waits for
 * that run's `run.completed` part before the next.
 */
export interface AgentProviderV1Session {
  /**
   * Hands the turn's input to the agent and returns; the run's progress and its one
   * `run.completed` part arrive through `emit`. A failure to start is reported as a
   * `run.completed` part (or a rejected promise, which the runtime turns into one).
   */
  doTurn(turn: AgentProviderV1Turn): Promise<void>;
  /**
   * Runs a control (compact, clear, cost, …) as a run of its own: like doTurn, it ends with one
   * `control.completed` part and then one `run.completed` part.
   */
  doControl(control: AgentProviderV1Control): Promise<void>;
  /** Switches the model live; resolves with the model now in effect (an alias resolved). */
  doSetModel(model: string): Promise<string>;
  doGetContextUsage(): Promise<ContextUsage>;
  /** The agent's own cost report for the conversation, as text. */
  doGetSessionCost(): Promise<{ readonly report: string }>;
  /**
   * Stops the run if it is the one in progress. Resolves once the agent acknowledged the stop
   * (the run then ends with a run.completed part, normally interrupted); resolves { applied: false }
   * when that run is not in progress (nothing to stop). Concurrent calls share one request.
   * Rejects with provider_rejected when the agent did not apply the stop (a retry may).
   */
  doInterrupt(interrupt: { readonly runId: string }): Promise<{ readonly applied: boolean }>;
  /**
   * Delivers the host's answer to an interaction this session raised (an `interaction.requested`
   * part). Resolves once the agent has it; rejects with an AgentError when it cannot be delivered.
   * The runtime has already checked the answer against the request.
   */
  doRespond(response: { readonly interactionRef: string; readonly answer: InteractionAnswer }): Promise<void>;
  /**
   * Changes the permission mode live; resolves with the mode now in effect. Rejects with
   * requires_restart when the running agent cannot enter it. With no process running, the mode
   * applies from the next launch.
   */
  doSetPermissionMode(mode: PermissionMode): Promise<PermissionMode>;
  /** Whether entering `mode` needs a new process (so a host can tell in advance). */
  requiresRestartFor(mode: PermissionMode): boolean;
  /**
   * Stops the agent process. "release" keeps the conversation resumable (the session stays
   * open); "close" ends the session. Nothing is emitted after the returned promise settles.
   */
  doStop(reason: AgentProviderV1StopReason, options?: AgentProviderV1StopOptions): Promise<void>;
}
