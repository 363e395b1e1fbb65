import type { SessionCounts } from './tether-store.js';

/** Another runtime that holds a session, as a refused caller is told about it. */
export interface SessionHolder {
  /** The holder's stable identity (one per data directory). */
  readonly ownerId: string;
  /** Where the holder's daemon takes commands (the URL it advertised), null when it advertised none. */
  readonly address: string | null;
}

export type SessionClaim =
  /** This runtime holds the session now (it may have held it already). */
  | { readonly status: 'claimed' }
  /** A live runtime holds it: commands on it go there. */
  | { readonly status: 'held_elsewhere'; readonly holder: SessionHolder };

/** Word that another runtime appended to a session: its last seq now (the rows are in the store). */
export interface AppendNotice {
  readonly sessionId: string;
  readonly seq: number;
}

/**
 * What a store shared by several runtimes (PostgreSQL, several daemons) adds to the port: which
 * runtime drives each session, and word of the others' appends. Stores one runtime holds alone
 * (in-memory, SQLite) have none, and the runtime then treats every session as its own.
 *
 * A runtime drives a session (starts its agent, writes its events) only while it holds the
 * session's lease. A lease lives as long as its holder renews its heartbeat; each claim of a session
 * another holder had raises the session's fencing token, and the store refuses (store_failure,
 * details.reason lease_lost, details.sessionIds) a commit that touches a session this runtime no
 * longer holds with the token it claimed it with: a stale holder's writes are refused by the
 * database, not by its goodwill.
 */
export interface SessionCoordination {
  /** This runtime's identity among those sharing the store. */
  readonly ownerId: string;
  /** How often the runtime should look for sessions whose holder died (findOrphans). */
  readonly sweepIntervalMs: number;
  /**
   * Takes the session's lease for this runtime: when no one holds it, when this owner already does
   * (or did, before a restart), or when its holder stopped renewing. A session not yet stored can
   * be claimed (a new session is claimed before its first commit).
   */
  claim(sessionId: string): Promise<SessionClaim>;
  /** Gives these sessions' leases up (they left this runtime's memory); unknown or lost ones are ignored. */
  release(sessionIds: readonly string[]): Promise<void>;
  /**
   * Open sessions (not closed, or recording a live process) that no live runtime holds: their
   * holder stopped renewing, or released them without closing them. For a runtime to take over.
   */
  findOrphans(): Promise<string[]>;
  /**
   * Open sessions whose lease names this owner id already: what a predecessor with the same owner
   * id (this data dir's process before a crash or a restart) held, this runtime's to recover even
   * when it takes up no orphan of another's (adoptsOrphanedSessions false). Optional: without it,
   * such a runtime recovers those sessions only as commands ask for them.
   */
  findOwn?(): Promise<string[]>;
  /**
   * Listens for other runtimes' appends (this runtime's own may be reported too: ignore them). The
   * listener gets `'resync'` when notices may have been missed (the notification connection broke
   * and is back): whoever follows a session then reads the store for what it has not seen.
   */
  onAppended(listener: (notice: AppendNotice | 'resync') => void): () => void;
  /**
   * Listens for sessions deleted through any runtime sharing the store (this one's included), told
   * once the deletion committed. A notice missed meanwhile is covered by the `'resync'` that
   * onAppended's listeners get: whoever follows a session then finds out whether it is still stored.
   */
  onDeleted(listener: (sessionId: string) => void): () => void;
  /** Sessions this runtime held whose lease another runtime took (found by the heartbeat). */
  onLost(listener: (sessionIds: readonly string[]) => void): () => void;
  /** Sets the address other daemons' refusals name for this runtime (the daemon's URL, once it listens). */
  advertise(address: string): Promise<void>;
  /**
   * The open sessions this runtime holds the lease of, by state as last stored (closed 0: a closed
   * session's lease is given back): what this runtime drives, where countSessionsByState counts every runtime's.
   */
  countHeldSessionsByState?(): Promise<SessionCounts>;
}
