import { AgentError, type ProtocolEvent } from '@tether/protocol';
import type { TetherStore } from '../store/tether-store.js';
import type { SubscriptionHub } from './subscription-hub.js';

export interface FollowOptions {
  /** Events after this seq are handed on. */
  readonly afterSeq: number;
  /** Called synchronously, in seq order, once per event; return false to stop following. */
  // biome-ignore lint/suspicious/noConfusingVoidType: returning nothing keeps following, as true does.
  readonly onEvent: (event: ProtocolEvent) => boolean | void;
  /**
   * For a consumer that takes a long history at its own pace (a bounded buffer, an iterator): the
   * events already stored when following starts come here one at a time, the next once the last one's
   * promise resolved, the store read a page at a time as they are taken; resolve false to stop. From
   * where they end, onEvent takes over (live events, and any stored meanwhile). Without it, every
   * event goes to onEvent.
   */
  // biome-ignore lint/suspicious/noConfusingVoidType: returning nothing keeps following, as true does.
  readonly onStoredEvent?: (event: ProtocolEvent) => Promise<boolean | void>;
  /** The store failed (or the events did not join up): following has stopped. */
  readonly onError?: (error: unknown) => void;
}

/** Stored events are read at most this many at a time, whoever follows. */
const replayPageSize = 500;
/**
 * And about this much text at a time: a page of events holding large outputs (a long answer is
 * stored in 100,000-character events) is in memory while its reader takes it, and is read in one
 * synchronous step that holds up everything else. 500 such events were ~100 MB per slow reader.
 */
const replayPageBudget = 1024 * 1024;
/** The first page, before the events' size is known. */
const firstReplayPageSize = 50;

/** The characters an event holds in its strings, two levels down: what its size is made of. */
function approximateSize(event: ProtocolEvent): number {
  let size = 64;
  for (const value of Object.values(event)) {
    if (typeof value === 'string') size += value.length;
    else if (value !== null && typeof value === 'object')
      for (const inner of Object.values(value)) if (typeof inner === 'string') size += inner.length;
  }
  return size;
}

/** How many events the next page holds, from the size of the last one's. */
function nextPageSize(page: readonly ProtocolEvent[]): number {
  if (page.length === 0) return firstReplayPageSize;
  const average = page.reduce((total, event) => total + approximateSize(event), 0) / page.length;
  return Math.max(1, Math.min(replayPageSize, Math.floor(replayPageBudget / average)));
}

/**
 * The one replay-then-follow: hands a session's events after `afterSeq` on, the stored ones first,
 * then each live one as it is published, with no gap and no duplicate. runtime.follow is this;
 * subscribeWithReplay adapts it to an async iterable and the daemon's session feed to its bounded
 * outboxes. A live event costs one synchronous call (no promise or generator step per event and
 * subscriber: a host fans one session out to many subscribers through here).
 *
 * The paced replay (onStoredEvent) registers no live listener: while a slow reader works through a
 * long history, live events wait in the store, not in memory. Then the live listener is registered
 * before the store is read again; live events that arrive while it is being read wait and are
 * merged by seq. Returns a stop function.
 */
export function followSession(
  hub: SubscriptionHub,
  store: TetherStore,
  sessionId: string,
  options: FollowOptions,
): () => void {
  let last = options.afterSeq;
  let stopped = false;
  // True while the store is read: live events wait in `arrived` until the stored ones are handed on.
  let catchingUp = true;
  const arrived: ProtocolEvent[] = [];
  let remove = () => {};

  const stop = () => {
    if (stopped) return;
    stopped = true;
    arrived.length = 0;
    remove();
  };
  const hand = (event: ProtocolEvent) => {
    last = event.seq;
    if (options.onEvent(event) === false) stop();
  };
  const fail = (error: unknown) => {
    if (stopped) return;
    stop();
    options.onError?.(error);
  };

  /** Hands on the next page of stored events; true when it was full (more may be stored). */
  let pageSize = firstReplayPageSize;
  const handPage = async (handOne: (event: ProtocolEvent) => void | Promise<void>): Promise<boolean> => {
    const asked = pageSize;
    const page = await store.readEvents(sessionId, { afterSeq: last, limit: asked });
    pageSize = nextPageSize(page);
    for (const event of page) {
      // A gap ends the page: the catch-up below reports it if the store cannot fill it.
      if (stopped || event.seq !== last + 1) return false;
      const pending = handOne(event);
      if (pending !== undefined) await pending;
    }
    return !stopped && page.length === asked;
  };

  // biome-ignore lint/suspicious/noConfusingVoidType: returning nothing keeps following, as true does.
  const replay = async (onStoredEvent: (event: ProtocolEvent) => Promise<boolean | void>): Promise<void> => {
    const handStored = async (event: ProtocolEvent) => {
      last = event.seq;
      if ((await onStoredEvent(event)) === false) stop();
    };
    while (await handPage(handStored));
  };

  /** Hands on what arrived live and joins up; false when a gap is left before the rest. */
  const handArrived = (): boolean => {
    arrived.sort((left, right) => left.seq - right.seq);
    while (arrived.length > 0 && !stopped) {
      const next = arrived[0]!;
      if (next.seq > last + 1) return false;
      arrived.shift();
      if (next.seq === last + 1) hand(next);
    }
    return true;
  };

  const catchUp = async (): Promise<void> => {
    while (!stopped) {
      const before = last;
      if (await handPage(hand)) continue;
      if (stopped) return;
      // At the store's end; nothing can arrive between this check and the flag (one synchronous step).
      if (handArrived()) {
        catchingUp = false;
        return;
      }
      // Events published but not found in the store would be a broken log: say so rather than skip them.
      if (last === before)
        throw new AgentError({
          code: 'internal_error',
          message: 'The event log has a gap the store cannot fill. Reconnect from the last seq received.',
        });
    }
  };

  const follow = () => {
    remove = hub.add(sessionId, (event) => {
      if (stopped || event.seq <= last) return;
      if (!catchingUp && event.seq === last + 1) return hand(event);
      arrived.push(event);
      // Ahead of what was handed on: the missing ones are stored (events are published after commit).
      if (!catchingUp) {
        catchingUp = true;
        void catchUp().catch(fail);
      }
    });
    return catchUp();
  };

  const { onStoredEvent } = options;
  if (onStoredEvent === undefined) void follow().catch(fail);
  else
    void replay(onStoredEvent)
      .then(() => (stopped ? undefined : follow()))
      .catch(fail);
  return stop;
}
