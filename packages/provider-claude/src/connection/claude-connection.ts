import type { SessionConfiguration } from '@tether/protocol';
import type { CliFrame } from '../frames/cli-frame-schemas.js';
import type { ConversationStart } from '../launch/build-arguments.js';
import type { CliPermissionMode } from '../launch/permission-modes.js';
import type { ProcessExit } from '../process/claude-process.js';
import type { ClaudeUserMessage } from './user-message.js';

/**
 * The seam between a Claude session and whatever carries its stream-json traffic: the CLI's own
 * stdio (cli transport) or the Agent SDK's query() (sdk transport). Both speak the same frames, so
 * the session, the translator, the tool prompts, the interrupt rules and the classifier are shared;
 * a connection only moves user lines in, frames out, and control requests and prompt answers both ways.
 */
export type ClaudeTransport = 'cli' | 'sdk';

// The user line's content lives with its builder; re-exported for the transports and the session.
export { type ClaudeUserMessage, userMessage } from './user-message.js';

/** The control requests a session sends. A transport without one rejects it with capability_unsupported. */
export type ClaudeControlRequest =
  /** Loads everything a first turn needs; its answer means "ready" (warm spares). */
  | { readonly subtype: 'initialize' }
  /** The models the agent offers, as its initialize answer lists them: asked of an agent already running. */
  | { readonly subtype: 'list_models' }
  | { readonly subtype: 'interrupt' }
  | { readonly subtype: 'set_permission_mode'; readonly mode: CliPermissionMode }
  /** null: the CLI's default model. */
  | { readonly subtype: 'set_model'; readonly model: string | null }
  /** summary: from the last answer's usage, without the per-category token counts (no API calls). */
  | { readonly subtype: 'get_context_usage'; readonly detail?: 'summary' }
  | { readonly subtype: 'get_session_cost' }
  /** The account's plan limits (skip_behaviors: without the scan of local transcripts). */
  | { readonly subtype: 'get_usage'; readonly skip_behaviors: true }
  /** Drops a user line the CLI has not taken into a turn yet: { cancelled } says whether it did. */
  | { readonly subtype: 'cancel_async_message'; readonly message_uuid: string }
  /** Files back as they were before that user message (dry_run: only what that would change). */
  | { readonly subtype: 'rewind_files'; readonly user_message_id: string; readonly dry_run: boolean }
  /** Binds a parked spare (started with awaitClaim) to a session's folder; refused with a reason token. */
  | { readonly subtype: 'claim_session'; readonly cwd: string; readonly permission_mode?: CliPermissionMode };

/**
 * How a connection ended. A process of ours reports its exit (or its spawn failure); a transport
 * whose message stream ended or threw with no process exit to explain it reports that instead
 * (`processExit`: the clean exit of a process the transport closed after its own failure).
 */
export type ConnectionEnding =
  | ProcessExit
  | { readonly kind: 'stream_failed'; readonly processExit?: ProcessExit }
  | { readonly kind: 'stream_ended' };

/** The exit of the connection's process, when it had one that exited. */
export function processExitOf(ending: ConnectionEnding): Extract<ProcessExit, { kind: 'exited' }> | undefined {
  const exit = ending.kind === 'stream_failed' ? ending.processExit : ending;
  return exit?.kind === 'exited' ? exit : undefined;
}

/** The OS identity of a connection's agent process (recorded in session.process_started). */
export interface ConnectionProcess {
  readonly pid: number;
  readonly startTime: number | undefined;
  readonly marker: string;
}

/** Where a connection's output goes; switched when a warm spare is adopted by a session. */
export interface ConnectionListener {
  /** Every frame except control traffic, in the order the agent wrote them. */
  onFrame(frame: CliFrame): void;
  /** Output that could not be read as a frame, as a bounded diagnostic code. */
  onNote(code: string): void;
  /** The agent asks before a tool runs (can_use_tool, AskUserQuestion included): answer once with answerPrompt. */
  onPrompt(requestId: string, request: unknown): void;
  /** The agent took a prompt back (it no longer waits for the answer). */
  onPromptWithdrawn(requestId: string): void;
  /** A write to the agent's input failed (it closed its stdin, or is exiting): told once. */
  onInputFailed(): void;
  /** The connection is over; nothing follows. */
  onEnd(ending: ConnectionEnding): void;
}

export interface ClaudeConnection {
  readonly transport: ClaudeTransport;
  /** The agent process when this transport knows it (undefined for an injected SDK query). */
  readonly process: ConnectionProcess | undefined;
  /** False once the connection has ended. */
  readonly running: boolean;
  /** Writes one user line; false when the agent no longer takes input (a write that fails later is reported by onInputFailed). */
  send(message: ClaudeUserMessage): boolean;
  /** Sends a control request and resolves with the agent's answer payload. */
  request(request: ClaudeControlRequest, options?: { readonly timeoutMs?: number }): Promise<unknown>;
  /**
   * Answers one of the agent's prompts: whether the agent's input took it (false when it no longer
   * waits for one with that id or no longer takes input: its stdin closed). A promise when that is
   * known only once the write completed, settling before any later output of the agent is read.
   */
  answerPrompt(requestId: string, response: Record<string, unknown>): boolean | Promise<boolean>;
  /** Ends the agent (gracefully, escalating when it is busy or late; at once with `force`) and waits for what it left to be swept. */
  stop(options: { readonly busy: boolean; readonly force?: boolean }): Promise<void>;
  /** Settles once the agent's process has exited and what it left running was swept (bounded); at once when it has no process. */
  swept(): Promise<void>;
}

/** Everything a transport needs to start an agent for a session. */
export interface LaunchPlan {
  readonly configuration: SessionConfiguration;
  readonly conversation: ConversationStart;
  readonly ephemeral: boolean;
  readonly cwd: string;
  /**
   * Start parked (cli: --await-claim; sdk: prewarm()): cwd is a neutral folder, and a claim_session
   * request names the session's.
   */
  readonly awaitClaim?: boolean;
  /**
   * A read beside the sessions (the model list), run at the lowest priority by its reader: not one of
   * the agents whose number decides theirs (process/agent-priority.ts).
   */
  readonly background?: boolean;
  /** The child's whole environment, built by buildClaudeEnvironment (nothing inherited by accident). */
  readonly environment: Record<string, string>;
}

/** Starts a connection for a launch plan, its output going to `listener`. */
export type ConnectionFactory = (plan: LaunchPlan, listener: ConnectionListener) => ClaudeConnection;

/** A listener that passes calls on to `target` only while `isCurrent()` (a replaced connection's late calls are ignored). */
export function whileCurrent(isCurrent: () => boolean, target: ConnectionListener): ConnectionListener {
  return {
    onFrame: (frame) => isCurrent() && target.onFrame(frame),
    onNote: (code) => isCurrent() && target.onNote(code),
    onPrompt: (requestId, request) => isCurrent() && target.onPrompt(requestId, request),
    onPromptWithdrawn: (requestId) => isCurrent() && target.onPromptWithdrawn(requestId),
    onInputFailed: () => isCurrent() && target.onInputFailed(),
    onEnd: (ending) => isCurrent() && target.onEnd(ending),
  };
}
