import type {
  ContextUsage,
  ControlName,
  ImageMediaType,
  InteractionAnswer,
  PermissionMode,
  DirectoryWorkspace,
  SessionConfiguration,
} from '@tether/protocol';
import type { AgentProviderV1Part } from './provider-part.js';

export interface AgentProviderV1SessionOptions {
  /** Tether's session id (for diagnostics and process markers, not the provider's own id). */
  readonly sessionId: string;
  /** Where the agent runs: a directory the runtime prepared (a plain folder, or a worktree it made). */
  readonly workspace: DirectoryWorkspace;
  readonly configuration: SessionConfiguration;
  /** Keep no resumable conversation on the provider side. */
  readonly ephemeral: boolean;
  /**
   * The provider conversation to continue, decided by the runtime from stored state;
   * null starts a new conversation. Never inferred from the mere presence of an id.
   */
  readonly resumeProviderSessionId: string | null;
  /**
   * Start the conversation as a copy of another one instead of a new one (fork_session, and the
   * turn after rewind_session): the provider's conversation `providerSessionId`, cut after the
   * message `afterMessageId` (null: all of it). The original is never changed. Only with
   * resumeProviderSessionId null; once the copy exists the provider reports its id as usual
   * (session.provider_session_changed) and the runtime resumes that from then on.
   */
  readonly copyConversation?: {
    readonly providerSessionId: string;
    readonly afterMessageId: string | null;
  } | null;
  /**
   * What the session's runs cost so far (their run.usage costUsd together), so a provider that
   * enforces configuration.maxCostUsd gives a new agent process only what is left; absent: 0.
   */
  readonly spentCostUsd?: number;
  /** Receives every part the session produces, synchronously and in order. */
  readonly emit: (part: AgentProviderV1Part) => void;
  /**
   * Called after the parts of a message the agent finished (its text and tool calls are complete).
   * The runtime then stores and publishes what was emitted at once, instead of holding the
   * message's last streamed text for its coalescing window; absent or never called, that text goes
   * out with the next commit, at most one window later.
   */
  readonly messageEnded?: () => void;
  /**
   * The agent began a turn by itself, not for input the runtime handed it (the claude CLI does when a
   * background task it ran finishes). The runtime records a run for it and returns its id: the turn's
   * parts name that run, and its `run.completed` ends it as any run's does. Returns null when the
   * session cannot take a run now (one is active or queued, the session is closing): the turn's
   * output is then not the runtime's to record. Absent: no such turn is recorded.
   */
  readonly agentStartedTurn?: () => string | null;
}

/**
 * A turn's input as the provider gets it: images with their bytes (validated by the runtime:
 * format, size), file references resolved inside the workspace.
 */
export type AgentProviderV1InputPart =
  | { readonly type: 'text'; readonly text: string }
  | { readonly type: 'image'; readonly mediaType: ImageMediaType; readonly data: string }
  | {
      readonly type: 'file';
      /** Absolute. */
      readonly path: string;
      /** Relative to the workspace, "/"-separated (what the log records). */
      readonly workspacePath: string;
    };

export interface AgentProviderV1Turn {
  readonly runId: string;
  readonly input: readonly AgentProviderV1InputPart[];
  /**
   * Checks the input again, as the runtime did when it took the turn: a provider that held the turn
   * back (it waited for a process slot) calls it right before the agent gets the input, since a file
   * it refers to may have gone meanwhile. Rejects with the refusal (invalid_command): the agent then
   * gets nothing and the run fails with it. Absent when there is nothing to check again (no files).
   */
  readonly recheckInput?: () => Promise<void>;
}

/** What a file rewind would change (dryRun) or changed. */
export interface AgentProviderV1FileRewind {
  /** False: nothing can be put back for that message; `reason` says why, `message` in words. */
  readonly canRewind: boolean;
  readonly reason?: 'checkpointing_off' | 'no_checkpoint';
  readonly message?: string;
  /** Absolute paths (dry run: the agent's count; after a real rewind: those of the dry run). */
  readonly paths: readonly string[];
  readonly insertions: number;
  readonly deletions: number;
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
  /**
   * Starts the agent's process ahead of the session's next turn (open_session's startAgent), so that
   * turn does not wait for the agent's start-up; the process is then released like any idle one.
   * Resolves once it runs (at once when one already does); rejects with an AgentError when it cannot
   * start (the next turn tries again). Optional: without it, startAgent has no effect.
   */
  doStart?(): Promise<void>;
  /**
   * The session's opening is recorded (a new session, not one reopened or forked). A provider holding
   * a process ready for new sessions (a warm spare) may hand it to this session now, so that its first
   * turn does not wait for the hand-over; it starts nothing. Optional; returns at once, and what goes
   * wrong is the provider's to tell (a diagnostic), never thrown.
   */
  doOpened?(): void;
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
   * Hands a follow-up to the agent while the run `runId` is active, to take into that run at its
   * next opportunity (capabilities.steer). Resolves once the agent has it. The run does not end
   * before every steered input ended: each gets one `input.folded` part (it reached the model,
   * inside this run, even when the agent answers it after the text it was writing) or one
   * `input.cancelled` part (the run was interrupted before it did, or the agent refused it), and
   * only then the run's `run.completed`. Rejects with an AgentError when it cannot be sent (the run
   * is not active, the process is gone); nothing was sent then.
   */
  doSteer?(steer: {
    readonly runId: string;
    readonly inputId: string;
    readonly input: readonly AgentProviderV1InputPart[];
  }): Promise<void>;
  /**
   * Takes back a steered input (doSteer) the agent has not taken into the run yet
   * (cancel_queued_input). withdrawn true: the agent dropped it and its `input.cancelled` part
   * (withdrawn) was emitted before this resolved. false: the agent already took it (its
   * `input.folded` part came or follows) or no steered input has that id.
   */
  doWithdrawSteer?(withdraw: { readonly inputId: string }): Promise<{ readonly withdrawn: boolean }>;
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
  /**
   * Puts the workspace's files back as they were before the input message `inputMessageId` (a
   * run.checkpointed's inputMessageId), or, with dryRun, only says what that would change. Starts
   * the agent (resuming the conversation) if none runs. Optional: without it, or with
   * capabilities.rewindFiles false, rewind_session with files is refused.
   */
  doRewindFiles?(request: {
    readonly inputMessageId: string;
    readonly dryRun: boolean;
  }): Promise<AgentProviderV1FileRewind>;
  /** Whether entering `mode` needs a new process (so a host can tell in advance). */
  requiresRestartFor(mode: PermissionMode): boolean;
  /**
   * Throws the refusal (an AgentError) for a mode the agent would refuse to launch in, nothing
   * changed, so a restart into it is refused before the running agent is stopped for nothing.
   * Optional: without it, every mode is taken to launch.
   */
  refuseUnlaunchableMode?(mode: PermissionMode): void;
  /**
   * Stops the agent process. "release" keeps the conversation resumable (the session stays
   * open); "close" ends the session. Nothing is emitted after the returned promise settles.
   */
  doStop(reason: AgentProviderV1StopReason, options?: AgentProviderV1StopOptions): Promise<void>;
}
