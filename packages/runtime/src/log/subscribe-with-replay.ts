import type { ProtocolEvent } from '@tether/protocol';
import type { TetherStore } from '../store/tether-store.js';
import { followSession } from './follow-session.js';
import type { SubscriptionHub } from './subscription-hub.js';

const replayPageSize = 500;

/**
 * Stored events after `afterSeq`, then live ones, with no gap and no duplicate, as an async
 * iterable. The stored part is read a page at a time as the consumer takes it (a long history is
 * never held at once); from where it ends, followSession takes over, which reads anything
 * committed meanwhile from the store before handing on live events.
 */
export async function* subscribeWithReplay(
  hub: SubscriptionHub,
  store: TetherStore,
  sessionId: string,
  options: { afterSeq: number; signal?: AbortSignal | undefined },
): AsyncGenerator<ProtocolEvent, void, undefined> {
  const { signal } = options;
  let last = options.afterSeq;
  for (;;) {
    if (signal?.aborted) return;
    const page = await store.readEvents(sessionId, { afterSeq: last, limit: replayPageSize });
    for (const event of page) {
      if (signal?.aborted) return;
      if (event.seq !== last + 1) break;
      last = event.seq;
      yield event;
    }
    if (page.length < replayPageSize) break;
  }
  yield* liveEvents(hub, store, sessionId, last, signal);
}

/** followSession as an async iterable: what it hands on waits in a queue for the consumer. */
async function* liveEvents(hub: SubscriptionHub, store: TetherStore, sessionId: string, afterSeq: number, signal: AbortSignal | undefined): AsyncGenerator<ProtocolEvent, void, undefined> {
  const queue: ProtocolEvent[] = [];
  // Set once followSession gave up (store failure): thrown to the consumer after what was queued.
  const failure: { error?: unknown; failed: boolean } = { failed: false };
  let wake: (() => void) | null = null;
  const stop = followSession(hub, store, sessionId, {
    afterSeq,
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
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
      wake = null;
    }
  } finally {
    stop();
    signal?.removeEventListener('abort', onAbort);
  }
}
