import type { ProtocolEvent, SessionSnapshot } from '@tether/protocol';
import type { EventWriter } from '../log/event-writer.js';
import { type FollowOptions, followSession } from '../log/follow-session.js';
import { subscribeWithReplay } from '../log/subscribe-with-replay.js';
import type { SubscriptionHub } from '../log/subscription-hub.js';
import type { SessionCounts, TetherStore } from '../store/tether-store.js';
import type { SubscribeOptions } from './runtime-types.js';
import { OpenReaders } from './open-readers.js';
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
  /** Each subscribe iteration in progress, and each follow on a shared store: how to end it from outside. */
  private readonly readers = new OpenReaders();

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
        register: (end) => this.readers.add(sessionId, end),
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
    let forget = () => {};
    const finish = () => {
      stopped = true;
      stop();
      forget();
    };
    const fail = (error: unknown) => {
      if (stopped) return;
      finish();
      options.onError?.(error);
    };
    let following = options;
    // Shared, a session may be deleted through another runtime: its readers here are ended then (endReadersOf).
    // A follower is told only of an error: it has no normal end to hear of, and a shutdown leaves it to its host.
    if (this.parts.shared) {
      forget = this.readers.add(sessionId, (error) => {
        if (error !== undefined) fail(error);
      });
      following = forgottenWhenDeclined(options, forget, fail);
    }
    const start = () => {
      if (!stopped) stop = followSession(this.parts.hub, this.parts.store, sessionId, following);
    };
    if (this.parts.entries.get(sessionId)) start();
    else this.requireSession(sessionId).then(start, fail);
    return finish;
  }

  /**
   * The session was deleted (here or through another runtime sharing the store): each subscribe
   * iteration of it throws session_not_found after what it was handed; on a shared store each follow
   * of it ends too, with that error (a follow here is ended by whoever deleted it, the daemon its streams).
   */
  endReadersOf(sessionId: string): void {
    this.readers.endSession(sessionId, sessionNotFound());
  }

  /** The runtime has shut down: every subscribe iteration ends, normally, after the events it was handed. */
  endAllReaders(): void {
    this.readers.endAll();
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

/** `options` whose follow is forgotten once its follower declines more (returns false), and fails through `fail`. */
function forgottenWhenDeclined(
  options: FollowOptions,
  forget: () => void,
  fail: (error: unknown) => void,
): FollowOptions {
  const { onEvent, onStoredEvent } = options;
  // biome-ignore lint/suspicious/noConfusingVoidType: a follower returning nothing keeps following, as true does.
  const keep = (kept: boolean | void) => {
    if (kept === false) forget();
    return kept;
  };
  return {
    afterSeq: options.afterSeq,
    onEvent: (event) => keep(onEvent(event)),
    ...(onStoredEvent ? { onStoredEvent: async (event) => keep(await onStoredEvent(event)) } : {}),
    onError: fail,
  };
}
