import type { ProtocolEvent } from '@tether/protocol';

type RequestedEvent = Extract<ProtocolEvent, { type: 'interaction.requested' }>;

/**
 * session_waiting: one timer per open interaction and threshold, started when it is requested and
 * cleared when it ends; one that fires means the session has waited that long for a person.
 */
export class WaitingTimers {
  private readonly thresholds: readonly number[];
  private readonly timers = new Map<string, NodeJS.Timeout[]>();

  private readonly fire: (event: RequestedEvent, thresholdMs: number) => Promise<void>;

  constructor(thresholdsMs: readonly number[], fire: (event: RequestedEvent, thresholdMs: number) => Promise<void>) {
    this.thresholds = [...new Set(thresholdsMs)];
    this.fire = fire;
  }

  requested(event: RequestedEvent): void {
    if (this.thresholds.length === 0) return;
    const timers = this.thresholds.map((thresholdMs) => {
      const timer = setTimeout(() => {
        void this.fire(event, thresholdMs).catch(() => undefined);
      }, thresholdMs);
      timer.unref();
      return timer;
    });
    this.timers.set(event.interactionRef, timers);
  }

  ended(interactionRef: string): void {
    for (const timer of this.timers.get(interactionRef) ?? []) clearTimeout(timer);
    this.timers.delete(interactionRef);
  }

  close(): void {
    for (const interactionRef of [...this.timers.keys()]) this.ended(interactionRef);
  }
}
