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
  options: { afterSeq: number; signal?: AbortSignal | undefined },
): AsyncGenerator<ProtocolEvent, void, undefined> {
  const { signal } = options;
  const queue: ProtocolEvent[] = [];
  // Set once followSession gave up (store failure): thrown to the consumer after what was queued.
  const failure: { error?: unknown; failed: boolean } = { failed: false };
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
  try {
    while (!signal?.aborted) {
      const event = queue.shift();
      if (event !== undefined) {
        yield event;
        continue;
      }
      if (failure.failed) throw failure.error;
      release(true);
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
      wake = null;
    }
  } finally {
    stop();
    release(false);
    signal?.removeEventListener('abort', onAbort);
  }
}
