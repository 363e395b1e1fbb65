import type { ProtocolEvent } from '@tether/protocol';

type Listener = (event: ProtocolEvent) => void;

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

  /** The sessions someone follows live now. */
  followedSessions(): string[] {
    return [...this.listeners.keys()];
  }

  subscriberCount(sessionId: string): number {
    return this.listeners.get(sessionId)?.size ?? 0;
  }
}
