import type { ProtocolEvent } from '@tether/protocol';
import type { AgentRuntime } from '@tether/runtime';

export interface FeedSink {
  /** Hands a live event on without waiting; false stops the feed (the subscriber was cut off or went away). */
  deliver(event: ProtocolEvent): boolean;
  /** Hands a stored event on once the subscriber has room for it; false stops the feed. */
  deliverWhenRoom(event: ProtocolEvent): Promise<boolean>;
}

/**
 * Feeds one session's events to a subscriber through runtime.follow: stored events after `afterSeq`
 * at the subscriber's pace (the store is the buffer, so a long history never counts against its
 * bound), then live ones straight into its bounded outbox, where one that falls behind is cut off
 * instead of slowing anyone down. Resolves when the feed ends; rejects with the runtime's error
 * (e.g. session_not_found, or a store failure).
 */
export function feedSession(
  runtime: AgentRuntime,
  sessionId: string,
  afterSeq: number,
  sink: FeedSink,
  signal: AbortSignal,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal.aborted) return resolve();
    const end = () => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    };
    const onAbort = () => {
      stop();
      resolve();
    };
    const stop = runtime.follow(sessionId, {
      afterSeq,
      onStoredEvent: async (event) => {
        if (!signal.aborted && (await sink.deliverWhenRoom(event))) return true;
        end();
        return false;
      },
      onEvent: (event) => {
        if (!signal.aborted && sink.deliver(event)) return true;
        end();
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
