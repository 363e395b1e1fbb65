import { AgentError, type ProtocolEvent } from '@tether/protocol';
import type { TetherStore } from '../store/tether-store.js';
import type { SubscriptionHub } from './subscription-hub.js';

export interface FollowOptions {
  /** Events after this seq are handed on. */
  readonly afterSeq: number;
  /** Called synchronously, in seq order, once per event; return false to stop following. */
  readonly onEvent: (event: ProtocolEvent) => boolean | void;
  /** The store failed (or the events did not join up): following has stopped. */
  readonly onError?: (error: unknown) => void;
}

const replayPageSize = 500;

/**
 * Hands a session's events after `afterSeq` to a callback: the stored ones first, then each live one
 * as it is published, with no gap and no duplicate. subscribeWithReplay is this as an async iterable;
 * a host that fans one session out to many subscribers calls it directly (no promise or generator
 * step per event and subscriber). The live listener is registered before the store is read; live events
 * that arrive while the store is being read wait and are merged by seq. Returns a stop function.
 */
export function followSession(hub: SubscriptionHub, store: TetherStore, sessionId: string, options: FollowOptions): () => void {
  let last = options.afterSeq;
  let stopped = false;
  // True while the store is read: live events wait in `arrived` until the stored ones are handed on.
  let catchingUp = true;
  const arrived: ProtocolEvent[] = [];

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

  const remove = hub.add(sessionId, (event) => {
    if (stopped || event.seq <= last) return;
    if (!catchingUp && event.seq === last + 1) return hand(event);
    arrived.push(event);
    // Ahead of what was handed on: the missing ones are stored (events are published after commit).
    if (!catchingUp) {
      catchingUp = true;
      void catchUp().catch(fail);
    }
  });

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
      const page = await store.readEvents(sessionId, { afterSeq: last, limit: replayPageSize });
      for (const event of page) {
        if (stopped || event.seq !== last + 1) break;
        hand(event);
      }
      if (stopped) return;
      if (page.length === replayPageSize) continue;
      // At the store's end; nothing can arrive between this check and the flag (one synchronous step).
      if (handArrived()) {
        catchingUp = false;
        return;
      }
      // Events published but not found in the store would be a broken log: say so rather than skip them.
      if (last === before) throw new AgentError({ code: 'internal_error', message: 'The event log has a gap the store cannot fill. Reconnect from the last seq received.' });
    }
  };

  void catchUp().catch(fail);
  return stop;
}
