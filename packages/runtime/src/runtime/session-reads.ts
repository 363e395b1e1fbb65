import type { ProtocolEvent, SessionSnapshot } from '@tether/protocol';
import type { EventWriter } from '../log/event-writer.js';
import { type FollowOptions, followSession } from '../log/follow-session.js';
import { subscribeWithReplay } from '../log/subscribe-with-replay.js';
import type { SubscriptionHub } from '../log/subscription-hub.js';
import type { SessionCounts, TetherStore } from '../store/tether-store.js';
import type { SubscribeOptions } from './runtime-types.js';
import { sessionNotFound } from './runtime-errors.js';
import type { SessionCache } from './session-cache.js';
import { snapshotOfRecord, toSessionSnapshot } from './session-entry.js';
import { type ListSessionsOptions, type ListingSource, countSessionsByState, listSessions } from './session-listing.js';

export interface SessionReadsParts {
  readonly store: TetherStore;
  readonly hub: SubscriptionHub;
  readonly writer: EventWriter;
  readonly entries: SessionCache;
  /** Other runtimes share the store (their open sessions are read from it). */
  readonly shared: boolean;
}

/**
 * The runtime's reads. A session in memory is read there (its state is ahead of its row while a
 * change is being written); any other is closed and finished, so its stored row and log answer
 * without bringing it back into memory.
 */
export class SessionReads {
  private readonly parts: SessionReadsParts;
  private readonly listing: ListingSource;

  constructor(parts: SessionReadsParts) {
    this.parts = parts;
    const { store, writer, entries } = parts;
    this.listing = {
      store,
      shared: parts.shared,
      resident: () => entries.entries(),
      snapshotOfEntry: async (entry) => {
        await entry.loadInteractions(store);
        return toSessionSnapshot(entry, writer.lastSeqOf(entry.record.sessionId));
      },
      snapshotOfRecord: (record) => snapshotOfRecord(record, [], record.lastSeq),
    };
  }

  async getSession(sessionId: string): Promise<SessionSnapshot> {
    const entry = this.parts.entries.get(sessionId);
    if (entry) return this.listing.snapshotOfEntry(entry);
    const record = await this.parts.store.getSession(sessionId);
    if (!record) throw sessionNotFound();
    // Open here only when another runtime sharing the store drives it.
    const open =
      record.state === 'closed' ? [] : await this.parts.store.listInteractions(sessionId, { openOnly: true });
    return snapshotOfRecord(record, open, record.lastSeq);
  }

  listSessions(options: ListSessionsOptions): Promise<SessionSnapshot[]> {
    return listSessions(this.listing, options);
  }

  countSessionsByState(): Promise<SessionCounts> {
    return countSessionsByState(this.listing);
  }

  subscribe(sessionId: string, options: SubscribeOptions): AsyncIterable<ProtocolEvent> {
    const replay = () =>
      subscribeWithReplay(this.parts.hub, this.parts.store, sessionId, {
        afterSeq: options.afterSeq ?? 0,
        signal: options.signal,
      });
    if (this.parts.entries.get(sessionId)) return replay();
    // Not in memory: only the store knows whether it exists, so the first step of the iteration tells.
    const requireSession = () => this.requireSession(sessionId);
    return {
      async *[Symbol.asyncIterator]() {
        await requireSession();
        yield* replay();
      },
    };
  }

  follow(sessionId: string, options: FollowOptions): () => void {
    let stopped = false;
    let stop = () => {};
    const start = () => {
      if (!stopped) stop = followSession(this.parts.hub, this.parts.store, sessionId, options);
    };
    if (this.parts.entries.get(sessionId)) start();
    else
      this.requireSession(sessionId).then(start, (error: unknown) => {
        if (!stopped) options.onError?.(error);
      });
    return () => {
      stopped = true;
      stop();
    };
  }

  async readEvents(sessionId: string, options: { afterSeq?: number; limit?: number }): Promise<ProtocolEvent[]> {
    await this.requireSession(sessionId);
    return this.parts.store.readEvents(sessionId, {
      afterSeq: options.afterSeq ?? 0,
      limit: Math.min(options.limit ?? 1000, 10_000),
    });
  }

  /** Throws session_not_found unless the session is in memory or stored. */
  private async requireSession(sessionId: string): Promise<void> {
    if (!this.parts.entries.get(sessionId) && !(await this.parts.store.getSession(sessionId))) throw sessionNotFound();
  }
}
