import type { ProtocolEvent } from '@tether/protocol';
import type { AgentRuntime } from '@tether/runtime';

export interface FeedSink {
  /** Hands a live event on without waiting; false stops the feed (the subscriber was cut off or went away). */
  deliver(event: ProtocolEvent): boolean;
  /** Hands a stored event on once the subscriber has room for it; false stops the feed. */
  deliverWhenRoom(event: ProtocolEvent): Promise<boolean>;
}

const replayPageSize = 500;

/**
 * Feeds one session's events to a subscriber: stored events after `afterSeq`, then live ones, with
 * no gap and no duplicate. The stored part is read page by page only as fast as the subscriber takes
 * it (the store is the buffer, so a long history never counts against the subscriber's bound); once
 * caught up, runtime.follow takes over from the last seq sent, and from then on a subscriber that
 * falls behind is cut off instead of slowing anyone down. Resolves when the feed ends; rejects with
 * the runtime's error (e.g. session_not_found after a delete).
 */
export async function feedSession(runtime: AgentRuntime, sessionId: string, afterSeq: number, sink: FeedSink, signal: AbortSignal): Promise<void> {
  let last = afterSeq;
  while (!signal.aborted) {
    const page = await runtime.readEvents(sessionId, { afterSeq: last, limit: replayPageSize });
    for (const event of page) {
      if (signal.aborted || !(await sink.deliverWhenRoom(event))) return;
      last = event.seq;
    }
    if (page.length < replayPageSize) break;
  }
  if (signal.aborted) return;
  // Live: a callback per published event, straight into the subscriber's bounded outbox.
  await new Promise<void>((resolve, reject) => {
    const onAbort = () => {
      stop();
      resolve();
    };
    const stop = runtime.follow(sessionId, {
      afterSeq: last,
      onEvent: (event) => {
        if (!signal.aborted && sink.deliver(event)) return true;
        signal.removeEventListener('abort', onAbort);
        resolve();
        return false;
      },
      onError: (error) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    });
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
