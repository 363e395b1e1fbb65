import type { ProtocolEvent } from '@tether/protocol';
import type { TetherStore } from '../store/tether-store.js';
import { followSession } from './follow-session.js';
import type { SubscriptionHub } from './subscription-hub.js';

/**
 * followSession as an async iterable: stored events after `afterSeq`, then live ones, with no gap
 * and no duplicate. A stored event is taken from the store only once the consumer took the one
 * before (a long history is never held at once); live ones wait in a queue for the consumer.
 */
export async function* subscribeWithReplay(
  hub: SubscriptionHub,
  store: TetherStore,
  sessionId: string,
  options: {
    afterSeq: number;
    signal?: AbortSignal | undefined;
    /**
     * Hands over how to end this iteration from outside (the session deleted, the runtime shut down):
     * after what was queued, with the error thrown to the consumer, or without one as a normal end.
     * Returns how to forget it once the iteration ended.
     */
    register?: (end: (error?: unknown) => void) => () => void;
  },
): AsyncGenerator<ProtocolEvent, void, undefined> {
  const { signal } = options;
  const queue: ProtocolEvent[] = [];
  // Set once followSession gave up (store failure), or it was ended from outside: thrown to the consumer
  // after what was queued (a normal end when ended without an error).
  const failure: { error?: unknown; failed: boolean; ended: boolean } = { failed: false, ended: false };
  let wake: (() => void) | null = null;
  // Resolves the stored event handed out last, once the consumer comes back for the next one.
  let taken: ((more: boolean) => void) | null = null;
  const release = (more: boolean) => {
    const resolve = taken;
    taken = null;
    resolve?.(more);
  };
  const stop = followSession(hub, store, sessionId, {
    afterSeq: options.afterSeq,
    onStoredEvent: (event) => {
      queue.push(event);
      wake?.();
      return new Promise<boolean>((resolve) => {
        taken = resolve;
      });
    },
    onEvent: (event) => {
      queue.push(event);
      wake?.();
    },
    onError: (error) => {
      failure.error = error;
      failure.failed = true;
      wake?.();
    },
  });
  const onAbort = () => wake?.();
  signal?.addEventListener('abort', onAbort);
  const forget = options.register?.((error) => {
    if (failure.failed || failure.ended) return;
    if (error === undefined) failure.ended = true;
    else {
      failure.error = error;
      failure.failed = true;
    }
    wake?.();
  });
  try {
    while (!signal?.aborted) {
      const event = queue.shift();
      if (event !== undefined) {
        yield event;
        continue;
      }
      if (failure.failed) throw failure.error;
      if (failure.ended) return;
      release(true);
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
      wake = null;
    }
  } finally {
    stop();
    release(false);
    forget?.();
    signal?.removeEventListener('abort', onAbort);
  }
}
