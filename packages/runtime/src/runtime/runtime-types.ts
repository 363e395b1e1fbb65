import type {
  CommandInput,
  CommandType,
  PermissionMode,
  ProtocolEvent,
  QuestionSetRequest,
  Receipt,
  ReceiptFor,
  RunSnapshot,
  SessionSnapshot,
  SubscribeOptions,
  TetherSurface,
} from '@tether/protocol';
import type { AgentError } from '@tether/protocol';
import type { AgentProviderV1, AgentProviderV1Availability } from '@tether/provider-spec';
import type { FollowOptions } from '../log/follow-session.js';
import type { SessionCounts, TetherStore } from '../store/tether-store.js';
import type { ListSessionsOptions } from './session-listing.js';
import type { ShutdownOptions } from './shutdown-grace.js';
import type { WorkspaceAcquirer } from '../workspace/workspace-acquirer.js';

/** A session that changed hands without a command (see AgentRuntimeOptions.onLeaseChange). */
export type LeaseChange =
  | {
      readonly change: 'lost';
      readonly sessionIds: readonly string[];
      /** How this runtime found out: its heartbeat read the lease, or a commit was refused (lease_lost). */
      readonly noticedBy: 'heartbeat' | 'refused_commit';
    }
  | { readonly change: 'adopted'; readonly sessionId: string };

export interface AgentRuntimeOptions {
  /** The providers hosts can open sessions with; the runtime never imports a concrete one. */
  readonly providers: readonly AgentProviderV1[];
  /** Where sessions, runs and events live. Defaults to an in-memory store. Owned by the runtime from now on. */
  readonly store?: TetherStore;
  /** The provider used when open_session names none (default: the first one). */
  readonly defaultProvider?: string;
  /**
   * Called for failures that have no caller to report to: a batch of provider output that could not
   * be stored even after retries. The runtime handles it (the sessions' agents are stopped, their
   * active runs end failed store_failure once that can be stored); this is for logs and alerts.
   */
  readonly onBackgroundError?: (error: AgentError) => void;
  /**
   * Called when, with a store other runtimes share, a session changes hands without a command: this
   * runtime lost its lease (another took it over) or adopted a session whose runtime stopped. The
   * runtime handles both; this is for logs.
   */
  readonly onLeaseChange?: (change: LeaseChange) => void;
  /**
   * With a store other runtimes share: whether this runtime takes up the open sessions no live
   * runtime drives (their runtime stopped or died), at start and as their leases lapse. Default true,
   * a daemon's job. A short-lived or single-purpose process (a CLI command, an editor's agent) sets
   * false: it drives the sessions it is asked for and leaves the rest to the daemons, which would
   * otherwise be refused them for as long as it runs. Without a shared store it changes nothing.
   */
  readonly adoptsOrphanedSessions?: boolean;
  /**
   * Observes every event this runtime publishes from its start, as observe() does: including what
   * recovering the sessions a crash left stores while createAgentRuntime loads (the runs it ends),
   * which an observe() call once it has returned would miss.
   */
  readonly observer?: (event: ProtocolEvent) => void;
  /** Deny (never allow) an interaction nobody answered within this many milliseconds. Default: wait forever. */
  readonly interactionTimeoutMs?: number;
  /**
   * How many closed sessions stay in memory when nothing uses them (default 100, the most recently
   * used); any other closed session is read back from the store when a command or read needs it.
   */
  readonly closedSessionCacheSize?: number;
  /**
   * At most this many open sessions (default 5,000): open_session beyond it, or reopening a closed
   * one, is refused with capacity_exceeded (details.reason "open_session_limit") until some close.
   * Sessions already open when the runtime starts are all loaded, whatever their number.
   */
  readonly maxOpenSessions?: number;
  /**
   * Workspace kinds beyond the built-in `directory` (e.g. `git_worktree` from @tether/workspace-git),
   * chosen by a workspace's `kind`; one given for a built-in kind replaces it.
   */
  readonly workspaces?: readonly WorkspaceAcquirer[];
  /** Host policy: mark a question set sensitive, so its answers are redacted in the log and in events. */
  readonly isSensitive?: (request: QuestionSetRequest) => boolean;
}

// Re-exported so a host of the runtime needs one import; both are defined once, in the protocol.
export type { CommandInput, FollowOptions, SubscribeOptions };

/**
 * The protocol's one surface (every command as a typed method, the session's snapshot and events;
 * observe completion through events or waitForRun) plus what only a host in this process has.
 */
export interface AgentRuntime extends TetherSurface {
  /**
   * Any command; answers with its receipt (the same receipt again for a repeated commandId). Takes
   * anything with a command type, since it validates the command itself.
   */
  dispatch<C extends { readonly type: CommandType }>(command: C): Promise<ReceiptFor<C>>;
  dispatch(command: unknown): Promise<Receipt>;
  /** Whether entering `mode` would need a new agent process (tells a host before it asks). */
  requiresRestartFor(sessionId: string, mode: PermissionMode): Promise<boolean>;

  /** Newest first (createdAt, then id); every session without options, or a page: limit, after `before`, of one state. */
  listSessions(options?: ListSessionsOptions): Promise<SessionSnapshot[]>;
  /** How many sessions are in each state, without listing them. */
  countSessionsByState(): Promise<SessionCounts>;
  getRun(runId: string): Promise<RunSnapshot>;
  /**
   * Resolves with the run once its run.completed event is stored and published. Rejects with
   * store_failure (details.reason run_end_not_stored) while the run's output, and its end, cannot
   * be stored; wait again once the store takes writes.
   */
  waitForRun(runId: string, options?: { signal?: AbortSignal }): Promise<RunSnapshot>;
  /**
   * The same events as subscribe, handed to a callback synchronously as they are published: for a
   * host that fans a session out to many subscribers (no promise per event and subscriber). onEvent
   * must be quick and return false to stop; the returned function stops too. An unknown session or a
   * store failure reaches onError, after which nothing more is handed on.
   */
  follow(sessionId: string, options: FollowOptions): () => void;
  /** Stored events only, for reading a log without following it. */
  readEvents(sessionId: string, options?: { afterSeq?: number; limit?: number }): Promise<ProtocolEvent[]>;

  /**
   * Every event of every session, as it is published (after it is stored); for metrics and logs.
   * Listeners must be quick: they run on the publish path.
   */
  observe(listener: (event: ProtocolEvent) => void): () => void;

  probeProviders(options?: { timeoutMs?: number }): Promise<Record<string, AgentProviderV1Availability>>;
  /** The providers the runtime was given, with their declared capabilities. */
  readonly providers: readonly AgentProviderV1[];
  readonly providerNames: readonly string[];

  /**
   * The runs this runtime drives now, from memory: never another runtime's on a shared store, and
   * answered while the store is unreachable (the daemon's drain waits for these).
   */
  activeRuns(): Array<{ readonly sessionId: string; readonly runId: string }>;
  /**
   * The first step of a graceful stop, for a host that lets the active runs finish before it calls
   * shutdown (the daemon's drain): from now on no queued `after_turn` follow-up starts, and none
   * reaches an agent. They stay queued (cancel_queued_input and close_session still end them); the
   * runtime that starts next over the store cancels them `runtime_restarted`. Everything else goes
   * on: runs finish, prompts are answered, commands are taken (refusing new turns is the host's
   * part). shutdown() does this first too. Idempotent.
   */
  beginShutdown(): void;
  /**
   * Stops every agent process (sessions stay open and resume on their next turn), completes
   * active runs as interrupted, flushes the log and closes the store (releasing the data dir).
   * With `graceMs`, active runs are first asked to stop and given that long to end on their own;
   * with `force`, agent processes are killed at once. Calling it again while it runs can only
   * hurry it (a shorter grace, force). `handleShutdownSignals` wires it to SIGINT/SIGTERM/SIGHUP.
   */
  shutdown(options?: ShutdownOptions): Promise<void>;
}
