import type {
  InteractionRequest,
  ContextUsage,
  InteractionStatus,
  LastRun,
  PlanLimits,
  QueuedInput,
  PermissionMode,
  ProtocolEvent,
  Receipt,
  RunSnapshot,
  SessionConfiguration,
  StoredBlob,
  TokenUsage,
  Workspace,
  WorkspaceStatus,
} from '@tether/protocol';
import type { SessionCoordination } from './session-coordination.js';

/** A session as the store keeps it: the projection the runtime reloads after a restart. */
export interface SessionRecord {
  readonly sessionId: string;
  readonly provider: string;
  readonly workspace: Workspace;
  /** What the workspace acquirer made of it (null for sessions recorded before workspaces were tracked). */
  readonly workspaceStatus: WorkspaceStatus | null;
  /** The full configuration, environment values included: kept in the session row, never in events. */
  readonly configuration: SessionConfiguration;
  readonly ephemeral: boolean;
  readonly redactInput: boolean;
  readonly state: 'idle' | 'running' | 'waiting' | 'closed';
  readonly activeRunId: string | null;
  /** The permission mode in effect as last reported by the provider (null until known). */
  readonly permissionMode: PermissionMode | null;
  /** The model in effect as last reported by the provider (null until known). */
  readonly model: string | null;
  /** The session's agent process while it runs: what a restarted runtime needs to clean up after a crash. */
  readonly liveProcess: LiveProcess | null;
  readonly providerSessionId: string | null;
  /** Set on a fork: the session (and run) its conversation was copied from. */
  readonly forkedFrom: { readonly sessionId: string; readonly runId: string | null } | null;
  /**
   * The conversation the next agent process starts from as a copy (a fork not yet started, or the
   * turn after a rewind); cleared once the provider reports the copy's own id. Null: resume
   * providerSessionId (or start anew when that is null too).
   */
  readonly copyConversation: { readonly providerSessionId: string; readonly afterMessageId: string | null } | null;
  readonly usage: TokenUsage;
  /** The first recorded turn's text, cut for a list (null until then; see SessionSnapshot.title). */
  readonly title: string | null;
  /** How the most recent completed run ended (null until one completes). */
  readonly lastRun: LastRun | null;
  /**
   * Follow-ups not yet started, folded in or cancelled (input.queued and what ends it), oldest
   * first. Optional so records written before follow-ups existed read as none.
   */
  readonly queuedInputs?: readonly QueuedInput[];
  /** The account's plan limits as last reported (session.limits_changed); absent or null until then. */
  readonly limits?: PlanLimits | null;
  /** The context window after the last measured run (session.context_measured); absent or null until then. */
  readonly contextUsage?: ContextUsage | null;
  /** The seq of the last stored event of this session (0 before the first). */
  readonly lastSeq: number;
  readonly createdAt: string;
  readonly updatedAt: string;
  /** The time of the last event that was not housekeeping (see countsAsActivity). */
  readonly lastActivityAt: string;
}

export type RunRecord = RunSnapshot;

export interface LiveProcess {
  readonly pid: number;
  readonly startTime: number | null;
  readonly marker: string;
}

/** One interaction (an approval or a question set) and where its lifecycle stands. */
export interface InteractionRecord {
  readonly interactionRef: string;
  readonly sessionId: string;
  readonly runId: string;
  readonly status: InteractionStatus;
  readonly request: InteractionRequest;
  readonly requestedAt: string;
  readonly settledAt: string | null;
}

/** A command's receipt as stored: written once per commandId, never replaced (TetherStore.commit). */
export interface StoredReceipt {
  readonly commandId: string;
  /** A hash of the command without its commandId, to tell a redelivery from a reused id. */
  readonly fingerprint: string;
  readonly receipt: Receipt;
  readonly at: string;
}

/** Everything one command (or one batch of provider output) changes, written in one transaction. */
export interface CommitUnit {
  /** In seq order per session; seqs continue each session's stored sequence with no gap. */
  readonly events: readonly ProtocolEvent[];
  readonly sessions: readonly SessionRecord[];
  readonly runs: readonly RunRecord[];
  readonly interactions: readonly InteractionRecord[];
  readonly receipts: readonly StoredReceipt[];
  /**
   * Content-addressed bytes the unit's events refer to (a turn's images), each referenced by its
   * session: written with the events or not at all, so a stored event never names a missing blob.
   */
  readonly blobs: readonly BlobRecord[];
}

/** A blob as a commit writes it: the bytes (stored once, whoever else refers to them) and the session that refers to them. */
export interface BlobRecord {
  /** Lowercase hex SHA-256 of `bytes`. */
  readonly sha256: string;
  readonly mediaType: string;
  readonly bytes: Uint8Array;
  readonly sessionId: string;
}

/** Where a page of sessions starts: after this session in newest-first order. */
export interface SessionPosition {
  readonly createdAt: string;
  readonly sessionId: string;
}

export interface SessionPageQuery {
  /** At most this many sessions (a limit of 0 or less gives none). */
  readonly limit: number;
  readonly before?: SessionPosition;
  readonly state?: SessionRecord['state'];
}

export type SessionCounts = Record<SessionRecord['state'], number>;

/**
 * What a store knows of its own connection, from the work it does anyway (a heartbeat): never a
 * query of its own, so a caller may ask at every request. No secret and no server text in it.
 */
export interface StoreHealth {
  readonly ok: boolean;
  /** Why not, a stable word (store_unreachable, store_unresponsive); absent when ok. */
  readonly reason?: string;
  /** The low-level cause: a SQLSTATE or an errno code, never the server's message. */
  readonly cause?: string;
  /** What is wrong and what to do about it. */
  readonly message?: string;
  /** Since when it has been so (ISO 8601). */
  readonly since?: string;
}

/**
 * The runtime's storage port. Implementations: the in-memory store (tests), SQLite
 * (@tether/store-sqlite) and PostgreSQL (@tether/store-postgres). The runtime is the only writer of
 * its sessions while it holds the store; PostgreSQL still refuses a second writer's unit that does
 * not continue a session's stored sequence (see commit).
 */
export interface TetherStore {
  readonly kind: string;
  /**
   * Present on a store several runtimes share (PostgreSQL): the runtime then drives only the
   * sessions it holds a lease on. Absent: every session in the store is this runtime's.
   */
  readonly coordination?: SessionCoordination;
  /** Every session, in the order first committed (tests and tools; the runtime loads only what start-up needs). */
  loadSessions(): Promise<SessionRecord[]>;
  /**
   * What the runtime keeps in memory from start-up, by id: every session
   * that is not closed, and closed ones that still record a live process (a crash left it to end).
   */
  loadOpenSessions(): Promise<SessionRecord[]>;
  /**
   * The sessions whose workspace status names this directory (a fork shares its source's worktree), in
   * the order first committed: what a delete asks before it removes a worktree another session holds.
   */
  listSessionsInDirectory(directory: string): Promise<SessionRecord[]>;
  /** Newest first (createdAt, then sessionId, both descending), after `before`, of one state if given. */
  listSessions(query: SessionPageQuery): Promise<SessionRecord[]>;
  /** How many sessions are in each state (every state present, 0 when none). */
  countSessionsByState(): Promise<SessionCounts>;
  getSession(sessionId: string): Promise<SessionRecord | undefined>;
  getRun(runId: string): Promise<RunRecord | undefined>;
  listRuns(sessionId: string): Promise<RunRecord[]>;
  findReceipt(commandId: string): Promise<StoredReceipt | undefined>;
  /** A session's interactions in the order they were requested; only pending/resolving ones with openOnly. */
  listInteractions(sessionId: string, options?: { openOnly?: boolean }): Promise<InteractionRecord[]>;
  getInteraction(sessionId: string, interactionRef: string): Promise<InteractionRecord | undefined>;
  /** Events with seq > afterSeq, ascending, at most `limit`. */
  readEvents(sessionId: string, options: { afterSeq: number; limit: number }): Promise<ProtocolEvent[]>;
  /** A blob the session refers to (undefined when it refers to none with that hash, even if another session does). */
  readBlob(sessionId: string, sha256: string): Promise<StoredBlob | undefined>;
  /**
   * Removes a session with its runs, events, interactions and blob references, and every blob no
   * other session refers to, in one transaction (receipts stay: they are keyed by command).
   */
  deleteSession(sessionId: string): Promise<void>;
  /**
   * Atomic: all of the unit or nothing. Rejects a unit whose seqs would leave a gap or repeat
   * (store_failure, details.reason sequence_conflict), checked against what is stored. A receipt is
   * written once: a unit carrying one whose commandId is already stored is rejected whole
   * (store_failure, details.reason receipt_exists; receipt-exists.ts), the stored receipt unchanged,
   * so a command sent to two runtimes sharing the store has one effect (the runtime then answers
   * with the stored receipt). Of two such units committed at once, one is stored and the other rejected.
   */
  commit(unit: CommitUnit): Promise<void>;
  /**
   * Present on a store that can lose touch with its server (PostgreSQL): whether it can reach it now,
   * as its own background work last found. Absent: nothing to lose touch with (in-memory, SQLite).
   */
  health?(): StoreHealth;
  /**
   * Present on a store whose server can stop answering with a statement in flight (PostgreSQL):
   * stops waiting for it. Every operation in flight and every later one rejects (store_failure,
   * details.reason store_abandoned) and close() no longer waits for the server. A forced shutdown
   * calls it when its store has not finished within a bound: what was not stored then is ended by a
   * runtime started later, as after a crash.
   */
  abandon?(): void;
  close(): Promise<void>;
}
