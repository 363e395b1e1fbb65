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
  readonly onError: (error: unknown) => void;
}

/** Stored events are read this many at a time. */
const pageSize = 500;

/**
 * Other runtimes' appends to sessions followed here: on each notice, the store is read after the
 * last seq handed on for the session and what it holds is published, in order, one read at a time
 * per session (notices arriving meanwhile only move where that read must reach). After a resync
 * (notices may have been missed) every followed session is read to its end.
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
  private readonly reading = new Map<string, { target: number }>();
  private readonly stopListening: () => void;
  private stopped = false;

  constructor(parts: RemoteAppendsParts) {
    this.parts = parts;
    this.stopListening = parts.coordination.onAppended((notice) => this.noticed(notice));
  }

  stop(): void {
    this.stopped = true;
    this.stopListening();
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
      return;
    }
    const inProgress = this.reading.get(sessionId);
    if (inProgress) {
      inProgress.target = Math.max(inProgress.target, target);
      return;
    }
    const reading = { target };
    this.reading.set(sessionId, reading);
    void this.read(sessionId, reading)
      .catch((error: unknown) => {
        // Where this runtime stands is unknown now: the next notice starts afresh.
        this.positions.delete(sessionId);
        this.parts.onError(error);
      })
      .finally(() => this.reading.delete(sessionId));
  }

  private async read(sessionId: string, reading: { target: number }): Promise<void> {
    const { store } = this.parts;
    let position = this.positions.get(sessionId);
    if (position === undefined) {
      const newest = Number.isFinite(reading.target)
        ? reading.target
        : ((await store.getSession(sessionId))?.lastSeq ?? 0);
      position = Math.max(0, newest - 1);
      this.parts.mayHaveMissed(sessionId);
    }
    for (;;) {
      const page = await store.readEvents(sessionId, { afterSeq: position, limit: pageSize });
      // Taken over here meanwhile: this runtime's own publishing covers it from now on.
      if (this.stopped || this.parts.isResident(sessionId)) {
        this.positions.delete(sessionId);
        return;
      }
      const last = page.at(-1);
      if (last === undefined) return;
      position = last.seq;
      this.positions.set(sessionId, position);
      this.parts.publish(page);
      if (page.length < pageSize && position >= reading.target) return;
    }
  }
}
