import type { DaemonLogger } from '../logging/create-logger.js';
import { RepeatLog } from '../logging/repeat-log.js';
import type { NotificationMetrics } from './notification-metrics.js';

export interface DeliverySettings {
  readonly attempts: number;
  readonly firstRetryMs: number;
  readonly attemptTimeoutMs: number;
  readonly queueLimit: number;
}

export const defaultDeliverySettings: DeliverySettings = {
  attempts: 5,
  // 4, 8, 16, 32 s between the 5 attempts (each cut by up to half by jitter): about a minute at most.
  firstRetryMs: 4_000,
  attemptTimeoutMs: 10_000,
  queueLimit: 100,
};

/** Deliveries to one receiver at a time: enough that one stalled delivery does not hold up the next ones. */
const maxInFlight = 4;

export interface OutgoingNotification {
  readonly id: string;
  readonly kind: string;
  readonly body: string;
  /** When the event happened (ms since epoch): latency is measured from it. */
  readonly eventAt: number;
}

/** What one attempt came to: accepted, worth another try, or refused for good. */
export type AttemptResult = 'sent' | 'retry' | 'refused';

/**
 * The lines a receiver can cause as fast as events come (a full queue, a receiver that refuses or is
 * down): each logged once per interval, the rest counted (logging/repeat-log.ts).
 */
const repeatedLines = {
  dropped: { first: 'notification queue full: the oldest was dropped', more: 'dropped from a full queue' },
  refused: { first: 'a receiver refused a notification', more: 'refused by the receiver' },
  undelivered: { first: 'a notification could not be delivered', more: 'not delivered' },
} as const;

/** One kind of receiver's way of sending (a signed webhook POST, a Web Push message); a throw counts as 'retry'. */
export type NotificationSender = (notification: OutgoingNotification, signal: AbortSignal) => Promise<AttemptResult>;

interface Destination {
  readonly name: string;
  readonly send: NotificationSender;
}

/** How an HTTP status is taken: 2xx accepted; 408, 429 and 5xx worth a retry; anything else (4xx, a redirect) a no. */
export function attemptResultOf(status: number): AttemptResult {
  if (status >= 200 && status < 300) return 'sent';
  if (status === 408 || status === 429 || status >= 500) return 'retry';
  return 'refused';
}

/**
 * One receiver's deliveries: a bounded queue (the oldest dropped and counted when full), a few
 * deliveries at once, each retried with exponential backoff and jitter. push() only queues: no
 * caller, least of all the runtime's event path, ever waits for a receiver.
 */
export class ReceiverQueue {
  private readonly waiting: OutgoingNotification[] = [];
  private inFlight = 0;
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly controllers = new Set<AbortController>();
  private closed = false;

  private readonly destination: Destination;
  private readonly settings: DeliverySettings;
  private readonly metrics: NotificationMetrics;
  private readonly logger: DaemonLogger;
  private readonly repeats: RepeatLog<keyof typeof repeatedLines>;

  constructor(
    destination: Destination,
    settings: DeliverySettings,
    metrics: NotificationMetrics,
    logger: DaemonLogger,
  ) {
    this.destination = destination;
    this.settings = settings;
    this.metrics = metrics;
    this.logger = logger;
    this.repeats = new RepeatLog(({ key, counted, since, until }) =>
      this.logger.warn(
        { receiver: destination.name, notifications: counted, since, until },
        `${counted} more notifications ${repeatedLines[key].more}, counted, not logged one by one`,
      ),
    );
  }

  push(notification: OutgoingNotification): void {
    if (this.closed) return;
    this.waiting.push(notification);
    if (this.waiting.length > this.settings.queueLimit) {
      this.waiting.shift();
      this.metrics.dropped.inc({ receiver: this.destination.name });
      this.warnOnce('dropped', { receiver: this.destination.name });
    }
    this.updatePending();
    this.startNext();
  }

  /** Stops every delivery now: what is queued or still retrying is dropped (and counted). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const timer of this.timers) clearTimeout(timer);
    for (const controller of this.controllers) controller.abort();
    const unsent = this.waiting.length + this.inFlight;
    if (unsent > 0) this.metrics.dropped.inc({ receiver: this.destination.name }, unsent);
    this.waiting.length = 0;
    this.inFlight = 0;
    this.updatePending();
    this.repeats.flush();
  }

  private warnOnce(line: keyof typeof repeatedLines, fields: Record<string, unknown>): void {
    if (this.repeats.occurred(line)) this.logger.warn(fields, repeatedLines[line].first);
  }

  private updatePending(): void {
    this.metrics.pending.set({ receiver: this.destination.name }, this.waiting.length + this.inFlight);
  }

  private startNext(): void {
    while (!this.closed && this.inFlight < maxInFlight && this.waiting.length > 0) {
      const next = this.waiting.shift() as OutgoingNotification;
      this.inFlight += 1;
      void this.deliver(next, 1);
    }
  }

  private finish(): void {
    if (this.closed) return;
    this.inFlight -= 1;
    this.updatePending();
    this.startNext();
  }

  private async deliver(notification: OutgoingNotification, attempt: number): Promise<void> {
    const result = await this.attempt(notification);
    if (this.closed) return;
    const receiver = this.destination.name;
    if (result === 'sent') {
      this.metrics.sent.inc({ receiver });
      this.metrics.latency.observe({ receiver }, Math.max(0, Date.now() - notification.eventAt) / 1000);
      this.logger.debug({ receiver, kind: notification.kind, attempt }, 'notification delivered');
      this.finish();
      return;
    }
    if (result === 'retry' && attempt < this.settings.attempts) {
      this.metrics.retried.inc({ receiver });
      this.logger.debug({ receiver, kind: notification.kind, attempt }, 'a notification attempt failed: retrying');
      const base = this.settings.firstRetryMs * 2 ** (attempt - 1);
      // Equal jitter: receivers that failed together (one outage) do not all come back at once.
      const delay = base / 2 + Math.random() * (base / 2);
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        void this.deliver(notification, attempt + 1);
      }, delay);
      timer.unref();
      this.timers.add(timer);
      return;
    }
    this.metrics.failed.inc({ receiver });
    this.warnOnce(result === 'refused' ? 'refused' : 'undelivered', {
      receiver,
      kind: notification.kind,
      attempts: attempt,
    });
    this.finish();
  }

  private async attempt(notification: OutgoingNotification): Promise<AttemptResult> {
    const controller = new AbortController();
    this.controllers.add(controller);
    const timeout = setTimeout(() => controller.abort(), this.settings.attemptTimeoutMs);
    timeout.unref();
    try {
      return await this.destination.send(notification, controller.signal);
    } catch {
      // Refused connection, reset, DNS failure, timeout: all worth another try.
      return 'retry';
    } finally {
      clearTimeout(timeout);
      this.controllers.delete(controller);
    }
  }
}
