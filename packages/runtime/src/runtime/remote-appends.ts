import type { ProtocolEvent } from '@tether/protocol';
import type { AppendNotice, SessionCoordination } from '../store/session-coordination.js';
import type { TetherStore } from '../store/tether-store.js';

export interface RemoteAppendsParts {
  readonly store: TetherStore;
  readonly coordination: SessionCoordination;
  /** Whether this runtime drives the session (it is in memory): it publishes its own events. */
  readonly isResident: (sessionId: string) => boolean;
  /** Whether anyone here waits for the session's events (live followers, run waiters). */
  readonly isWatched: (sessionId: string) => boolean;
  readonly watchedSessions: () => Iterable<string>;
  /** Hands another runtime's events on, as this runtime's own are after their commit (followers, run waiters). */
  readonly publish: (events: readonly ProtocolEvent[]) => void;
  /** Earlier events of the session may not have been handed on here (its first notice, a resync). */
  readonly mayHaveMissed: (sessionId: string) => void;
  /** The session was deleted (by any runtime): whoever follows it here is told it is gone. */
  readonly gone: (sessionId: string) => void;
  readonly onError: (error: unknown) => void;
}

/** A read in progress: the seq it must reach, and whether it must look for the session again first. */
interface Reading {
  target: number;
  lookAgain: boolean;
}

/** Stored events are read this many at a time. */
const pageSize = 500;

/**
 * A read to a session's end (after missed notices) that failed is tried again this long after, twice
 * as long each time up to the notice listener's 5 s, while the session is followed here: a deletion it
 * would have found has no notice left to come (a store connection broken with the notices' often
 * fails the first read after them).
 */
const fullReadRetry = { firstMs: 100, longestMs: 5_000 } as const;

/**
 * Other runtimes' appends to sessions followed here: on each notice, the store is read after the
 * last seq handed on for the session and what it holds is published, in order, one read at a time
 * per session (notices arriving meanwhile only move where that read must reach; a resync meanwhile
 * has it look for the session again, since what it found may predate a missed deletion). After a
 * resync (notices may have been missed) every followed session is read to its end, and one no longer
 * stored is gone (its deletion's notice was missed). A session this runtime gave up (handOver) is
 * read to its end as well: its new holder's notices were ignored while this runtime drove it.
 *
 * A session's first notice here (or a resync of one not yet read) hands on only its newest event:
 * followers read the store for what they have not seen (followSession fills gaps from the store),
 * and run waiters read their runs again.
 */
export class RemoteAppends {
  private readonly parts: RemoteAppendsParts;
  /** The last seq handed on, per followed session. */
  private readonly positions = new Map<string, number>();
  /** Reads in progress, with the seq each must reach. */
  private readonly reading = new Map<string, Reading>();
  private readonly stopListening: () => void;
  private readonly stopHearingDeletions: () => void;
  /** Full reads that failed, waiting to be tried again, with the wait before the next try. */
  private readonly retries = new Map<string, { readonly timer: NodeJS.Timeout; readonly delayMs: number }>();
  private stopped = false;

  constructor(parts: RemoteAppendsParts) {
    this.parts = parts;
    this.stopListening = parts.coordination.onAppended((notice) => this.noticed(notice));
    this.stopHearingDeletions = parts.coordination.onDeleted((sessionId) => this.deleted(sessionId));
  }

  stop(): void {
    this.stopped = true;
    this.stopListening();
    this.stopHearingDeletions();
    for (const { timer } of this.retries.values()) clearTimeout(timer);
    this.retries.clear();
  }

  /**
   * Sessions this runtime no longer drives (another runtime took their leases): their followers and
   * run waiters here get their events from the store from now on, as for any session driven
   * elsewhere, starting with what the new holder may have stored already.
   */
  handOver(sessionIds: readonly string[]): void {
    if (this.stopped) return;
    for (const sessionId of sessionIds) {
      this.positions.delete(sessionId);
      this.catchUp(sessionId, Number.POSITIVE_INFINITY);
    }
  }

  private deleted(sessionId: string): void {
    if (this.stopped) return;
    this.positions.delete(sessionId);
    this.parts.gone(sessionId);
  }

  private noticed(notice: AppendNotice | 'resync'): void {
    if (this.stopped) return;
    if (notice === 'resync') {
      for (const sessionId of this.parts.watchedSessions()) this.catchUp(sessionId, Number.POSITIVE_INFINITY);
      return;
    }
    this.catchUp(notice.sessionId, notice.seq);
  }

  private catchUp(sessionId: string, target: number): void {
    if (this.parts.isResident(sessionId) || !this.parts.isWatched(sessionId)) {
      this.positions.delete(sessionId);
      this.forgetRetry(sessionId);
      return;
    }
    const full = !Number.isFinite(target);
    const inProgress = this.reading.get(sessionId);
    if (inProgress) {
      inProgress.target = Math.max(inProgress.target, target);
      // What it found of the session predates the missed notices: it looks again before it ends.
      if (full) inProgress.lookAgain = true;
      return;
    }
    const reading: Reading = { target, lookAgain: full };
    this.reading.set(sessionId, reading);
    void this.read(sessionId, reading)
      .then(
        () => {
          if (!Number.isFinite(reading.target)) this.forgetRetry(sessionId);
        },
        (error: unknown) => {
          // Where this runtime stands is unknown now: the next notice starts afresh.
          this.positions.delete(sessionId);
          this.parts.onError(error);
          // After missed notices no next notice may come (a deletion's): this read is tried again.
          if (!Number.isFinite(reading.target)) this.retryFullRead(sessionId);
        },
      )
      .finally(() => this.reading.delete(sessionId));
  }

  private forgetRetry(sessionId: string): void {
    const retry = this.retries.get(sessionId);
    if (retry === undefined) return;
    clearTimeout(retry.timer);
    this.retries.delete(sessionId);
  }

  private retryFullRead(sessionId: string): void {
    if (this.stopped) return;
    const previous = this.retries.get(sessionId);
    if (previous) clearTimeout(previous.timer);
    const delayMs = previous ? Math.min(previous.delayMs * 2, fullReadRetry.longestMs) : fullReadRetry.firstMs;
    const timer = setTimeout(() => this.catchUp(sessionId, Number.POSITIVE_INFINITY), delayMs);
    timer.unref();
    this.retries.set(sessionId, { timer, delayMs });
  }

  private async read(sessionId: string, reading: Reading): Promise<void> {
    const { store } = this.parts;
    let position = this.positions.get(sessionId);
    if (position === undefined && !reading.lookAgain) position = Math.max(0, reading.target - 1);
    for (;;) {
      if (reading.lookAgain) {
        // Read to its end because notices may have been missed: a deletion's among them.
        reading.lookAgain = false;
        const record = await store.getSession(sessionId);
        if (record === undefined) {
          this.deleted(sessionId);
          return;
        }
        position ??= Math.max(0, record.lastSeq - 1);
      }
      if (position === undefined) return;
      if (!this.positions.has(sessionId)) this.parts.mayHaveMissed(sessionId);
      const page = await store.readEvents(sessionId, { afterSeq: position, limit: pageSize });
      // Taken over here meanwhile: this runtime's own publishing covers it from now on.
      if (this.stopped || this.parts.isResident(sessionId)) {
        this.positions.delete(sessionId);
        return;
      }
      const last = page.at(-1);
      if (last !== undefined) {
        position = last.seq;
        this.positions.set(sessionId, position);
        this.parts.publish(page);
      }
      const atEnd = page.length < pageSize;
      if (atEnd && (last === undefined || position >= reading.target) && !reading.lookAgain) return;
    }
  }
}
