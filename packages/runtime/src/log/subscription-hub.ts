import type { ProtocolEvent } from '@tether/protocol';
import type { TetherStore } from '../store/tether-store.js';

type Listener = (event: ProtocolEvent) => void;

const replayPageSize = 500;

/** Fans committed events out to live subscribers of each session. */
export class SubscriptionHub {
  private readonly listeners = new Map<string, Set<Listener>>();

  add(sessionId: string, listener: Listener): () => void {
    let set = this.listeners.get(sessionId);
    if (!set) {
      set = new Set();
      this.listeners.set(sessionId, set);
    }
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0) this.listeners.delete(sessionId);
    };
  }

  publish(events: readonly ProtocolEvent[]): void {
    for (const event of events) {
      const set = this.listeners.get(event.sessionId);
      if (!set) continue;
      for (const listener of set) listener(event);
    }
  }

  subscriberCount(sessionId: string): number {
    return this.listeners.get(sessionId)?.size ?? 0;
  }
}

/**
 * Stored events after `afterSeq`, then live ones, with no gap and no duplicate: the live listener
 * is registered before the store is read, and everything is ordered and deduplicated by seq.
 */
export async function* subscribeWithReplay(
  hub: SubscriptionHub,
  store: TetherStore,
  sessionId: string,
  options: { afterSeq: number; signal?: AbortSignal | undefined },
): AsyncGenerator<ProtocolEvent, void, undefined> {
  const { signal } = options;
  const live: ProtocolEvent[] = [];
  let wake: (() => void) | null = null;
  const onAbort = () => wake?.();
  const remove = hub.add(sessionId, (event) => {
    live.push(event);
    wake?.();
  });
  signal?.addEventListener('abort', onAbort);
  let last = options.afterSeq;

  async function* readStored(upTo: number): AsyncGenerator<ProtocolEvent> {
    while (last < upTo) {
      const page = await store.readEvents(sessionId, { afterSeq: last, limit: Math.min(replayPageSize, upTo - last) });
      if (page.length === 0) return;
      for (const event of page) {
        if (event.seq !== last + 1) return;
        last = event.seq;
        yield event;
      }
    }
  }

  try {
    yield* readStored(Number.MAX_SAFE_INTEGER);
    while (!signal?.aborted) {
      const event = live.shift();
      if (event === undefined) {
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
        wake = null;
        continue;
      }
      if (event.seq <= last) continue;
      // A live event ahead of what we have: fetch the missing ones from the store first.
      if (event.seq > last + 1) yield* readStored(event.seq - 1);
      if (event.seq === last + 1) {
        last = event.seq;
        yield event;
      }
    }
  } finally {
    remove();
    signal?.removeEventListener('abort', onAbort);
  }
}
