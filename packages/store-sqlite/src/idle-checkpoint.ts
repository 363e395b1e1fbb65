import type { DatabaseSync } from 'node:sqlite';

/** How long the store rests (no commit) before its write-ahead log is checkpointed. */
const quietMs = 250;
/** Commits after which the log is checkpointed without a rest: right after that commit, never in it. */
const commitsBeforeForcedCheckpoint = 1_000;

/**
 * Checkpoints the write-ahead log when the store rests, instead of SQLite's automatic checkpoint
 * (turned off in openDatabase). That one ran inside whichever commit took the log past 1,000
 * pages: copying ~4 MB into the database file and syncing both, 10-14 ms on a 2-core machine,
 * before that commit's events could be published — a run's end, a stop, the next deltas. A store
 * that never rests (a daemon streaming all the time) is checkpointed after a commit, once its
 * events are published, at most every `commitsBeforeForcedCheckpoint` commits. TRUNCATE leaves
 * the log file empty, so it never holds more than what came since the last rest.
 *
 * Each checkpoint, and the store's open, is followed by one write of the log_primer row: the first
 * write to an emptied log syncs the log's new header (migration 10), and that sync is then paid here,
 * at rest, not by the next commit a caller waits for.
 */
export class IdleCheckpoint {
  private readonly database: DatabaseSync;
  private lastCommitAt = 0;
  private commitsSince = 0;
  private quietTimer: NodeJS.Timeout | null = null;
  private forced: NodeJS.Immediate | null = null;
  private closed = false;

  constructor(database: DatabaseSync) {
    this.database = database;
    this.primeLog();
  }

  /** Called after each committed transaction. */
  committed(): void {
    this.lastCommitAt = Date.now();
    this.commitsSince += 1;
    if (this.commitsSince >= commitsBeforeForcedCheckpoint) {
      // After the microtasks that publish this commit's events.
      this.forced ??= setImmediate(() => {
        this.forced = null;
        this.checkpoint();
      }).unref();
      return;
    }
    // Armed once and pushed back when it fires early: no timer is replaced on every commit.
    if (this.quietTimer === null) this.armQuietTimer(quietMs);
  }

  close(): void {
    this.closed = true;
    if (this.quietTimer !== null) clearTimeout(this.quietTimer);
    if (this.forced !== null) clearImmediate(this.forced);
    this.quietTimer = null;
    this.forced = null;
  }

  private armQuietTimer(delayMs: number): void {
    this.quietTimer = setTimeout(() => {
      this.quietTimer = null;
      const rested = Date.now() - this.lastCommitAt;
      if (rested < quietMs) this.armQuietTimer(quietMs - rested);
      else this.checkpoint();
    }, delayMs).unref();
  }

  private checkpoint(): void {
    if (this.closed || this.commitsSince === 0) return;
    this.commitsSince = 0;
    try {
      this.database.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    } catch {
      // Nothing is lost: the log keeps the commits, and the next rest checkpoints it (or closing does).
      return;
    }
    this.primeLog();
  }

  /** Not counted as a commit: the log it leaves is one page, below any rest's checkpoint. */
  private primeLog(): void {
    try {
      this.database.exec('UPDATE log_primer SET primed = primed + 1 WHERE id = 1');
    } catch {
      // Nothing is lost either way: the next commit then syncs the log's header itself.
    }
  }
}
