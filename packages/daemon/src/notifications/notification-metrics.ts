import { Counter, Gauge, Histogram, Registry } from 'prom-client';

// From a receiver on this machine (milliseconds) to one reached after every retry (about a minute).
const deliveryBuckets = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

/** Delivery counts per receiver (labelled by name, never by URL), exposed on /v1/metrics with the daemon's own. */
export class NotificationMetrics {
  readonly registry = new Registry();
  readonly sent = new Counter({
    name: 'tether_notifications_sent_total',
    help: 'Notifications a receiver accepted (2xx).',
    labelNames: ['receiver'],
    registers: [this.registry],
  });
  readonly failed = new Counter({
    name: 'tether_notifications_failed_total',
    help: 'Notifications given up on: every attempt failed, or the receiver refused one (4xx other than 408/429).',
    labelNames: ['receiver'],
    registers: [this.registry],
  });
  readonly retried = new Counter({
    name: 'tether_notifications_retried_total',
    help: 'Attempts that failed and were scheduled again.',
    labelNames: ['receiver'],
    registers: [this.registry],
  });
  readonly dropped = new Counter({
    name: 'tether_notifications_dropped_total',
    help: 'Notifications dropped unsent: the oldest of a full queue, or left at shutdown.',
    labelNames: ['receiver'],
    registers: [this.registry],
  });
  readonly latency = new Histogram({
    name: 'tether_notification_delivery_seconds',
    help: 'From the event to the receiver accepting its notification, retries included.',
    labelNames: ['receiver'],
    buckets: deliveryBuckets,
    registers: [this.registry],
  });
  readonly pending = new Gauge({
    name: 'tether_notifications_pending',
    help: 'Notifications queued or being delivered, per receiver.',
    labelNames: ['receiver'],
    registers: [this.registry],
  });

  /** Every receiver appears in the scrape from the start, at zero. */
  constructor(receiverNames: readonly string[]) {
    for (const receiver of receiverNames) this.track(receiver);
  }

  /** A receiver in the scrape, at zero if it is new (one added later: a browser's push subscription). */
  track(receiver: string): void {
    for (const counter of [this.sent, this.failed, this.retried, this.dropped]) counter.inc({ receiver }, 0);
    this.pending.set({ receiver }, 0);
  }
}
