import type { InteractionRequest, ProtocolEvent, SessionSnapshot } from '@tether/protocol';
import type { AgentRuntime } from '@tether/runtime';
import type { DaemonLogger } from '../logging/create-logger.js';
import {
  type InteractionSummary,
  type NotificationBody,
  approvalAction,
  type NotificationLinks,
  newNotificationId,
  runSummary,
  sessionFacts,
  summarizeInteraction,
} from './notification-body.js';
import type { NotificationMetrics } from './notification-metrics.js';
import type { NotificationKind } from './notification-options.js';
import type { OneTimeLinks } from './one-time-links.js';
import { type DeliverySettings, type NotificationSender, ReceiverQueue } from './receiver-queue.js';
import { WaitingTimers } from './waiting-timers.js';

type RequestedEvent = Extract<ProtocolEvent, { type: 'interaction.requested' }>;

/** Anything that gets notifications: a webhook, a browser's push subscription; they differ only in how they send. */
export interface NotifierReceiver {
  readonly name: string;
  readonly kinds: ReadonlySet<NotificationKind>;
  readonly sessionWaitingMs: number;
  readonly send: NotificationSender;
}

export interface NotifierOptions {
  readonly runtime: Pick<AgentRuntime, 'observe' | 'getSession'>;
  /** The receivers known at start (webhooks). */
  readonly receivers: readonly NotifierReceiver[];
  /** session_waiting thresholds of receivers added later (push subscriptions): timers start with the interaction. */
  readonly laterWaitingThresholdsMs?: readonly number[];
  readonly links: OneTimeLinks;
  readonly metrics: NotificationMetrics;
  readonly settings: DeliverySettings;
  readonly logger: DaemonLogger;
  /** Whether the daemon serves the web UI (else notifications carry no "open" link). */
  readonly servesWebUi: boolean;
}

/**
 * Turns the runtime's events into notifications: it observes every event (after it is stored) and
 * only queues work from there; bodies are built and sent later, off the event path, so no receiver
 * can slow a run. Interactions' one-time links are minted here and voided when they settle.
 */
export class Notifier {
  private readonly receivers = new Map<string, { receiver: NotifierReceiver; queue: ReceiverQueue }>();
  private readonly waiting: WaitingTimers;
  private stopObserving: (() => void) | null = null;
  private baseUrl = '';
  private closed = false;
  private readonly options: NotifierOptions;

  constructor(options: NotifierOptions) {
    this.options = options;
    for (const receiver of options.receivers) this.addReceiver(receiver);
    const thresholds = options.receivers
      .filter((receiver) => receiver.kinds.has('session_waiting'))
      .map((receiver) => receiver.sessionWaitingMs);
    this.waiting = new WaitingTimers(
      [...thresholds, ...(options.laterWaitingThresholdsMs ?? [])],
      (event, thresholdMs) => this.sendWaiting(event, thresholdMs),
    );
  }

  /** A receiver from now on (a browser that enabled notifications); its name is its label in metrics. */
  addReceiver(receiver: NotifierReceiver): void {
    if (this.closed) return;
    this.removeReceiver(receiver.name);
    this.options.metrics.track(receiver.name);
    const queue = new ReceiverQueue(
      { name: receiver.name, send: receiver.send },
      this.options.settings,
      this.options.metrics,
      this.options.logger,
    );
    this.receivers.set(receiver.name, { receiver, queue });
  }

  /** Stops a receiver: what it still had queued is dropped (and counted). */
  removeReceiver(name: string): void {
    this.receivers.get(name)?.queue.close();
    this.receivers.delete(name);
  }

  /**
   * Starts observing, once the daemon knows the address links must point to (its advertised URL, or
   * where it listens), after `earlier`: what the runtime published before (the runs a crash left, ended as it loaded).
   */
  start(baseUrl: string, earlier: readonly ProtocolEvent[] = []): void {
    this.baseUrl = baseUrl.replace(/\/+$/, '');
    for (const event of earlier) this.observed(event);
    this.stopObserving = this.options.runtime.observe((event) => this.observed(event));
  }

  close(): void {
    this.closed = true;
    this.stopObserving?.();
    this.waiting.close();
    for (const { queue } of this.receivers.values()) queue.close();
  }

  /** Whether the notifier looks at this event at all (what is kept for it before it starts). */
  static concerns(event: ProtocolEvent): boolean {
    return event.type === 'run.completed' || event.type.startsWith('interaction.');
  }

  /** Runs inside the runtime's publish: bookkeeping only, never I/O, never a throw. */
  private observed(event: ProtocolEvent): void {
    switch (event.type) {
      case 'interaction.requested':
        this.waiting.requested(event);
        this.later(() => this.sendRequested(event));
        break;
      case 'interaction.settled':
      case 'interaction.withdrawn':
      case 'interaction.cancelled':
      case 'interaction.send_failed':
        this.options.links.drop(event.interactionRef);
        this.waiting.ended(event.interactionRef);
        break;
      case 'run.completed': {
        const kind: NotificationKind = event.outcome === 'failed' ? 'run_failed' : 'run_completed';
        if (!this.wanted(kind)) break;
        this.later(async () => {
          const run = runSummary(event);
          const snapshot = await this.snapshot(event.sessionId);
          this.send(kind, this.receiversOf(kind), {
            event,
            snapshot,
            extra: { run },
            links: this.sessionLinks(event.sessionId),
          });
        });
        break;
      }
      default:
        break;
    }
  }

  private wanted(kind: NotificationKind): boolean {
    return this.receiversOf(kind).length > 0;
  }

  private receiversOf(kind: NotificationKind, filter: (receiver: NotifierReceiver) => boolean = () => true) {
    return [...this.receivers.values()]
      .map(({ receiver }) => receiver)
      .filter((receiver) => receiver.kinds.has(kind) && filter(receiver));
  }

  /** Off the publish call stack; a failure is logged, never thrown into the runtime. */
  private later(work: () => Promise<void>): void {
    setImmediate(() => {
      if (this.closed) return;
      work().catch((error: unknown) =>
        this.options.logger.error(
          { errorName: error instanceof Error ? error.name : typeof error },
          'a notification could not be prepared',
        ),
      );
    });
  }

  private async snapshot(sessionId: string): Promise<SessionSnapshot | null> {
    try {
      return await this.options.runtime.getSession(sessionId);
    } catch {
      return null;
    }
  }

  private sessionLinks(sessionId: string): NotificationLinks {
    return this.options.servesWebUi ? { open: `${this.baseUrl}/sessions/${sessionId}` } : {};
  }

  /** The links of an interaction: the session's, plus one-time approve and deny links for an approval. */
  private interactionLinks(
    sessionId: string,
    interaction: InteractionSummary,
    request: InteractionRequest,
  ): NotificationLinks {
    const links = this.sessionLinks(sessionId);
    if (interaction.kind !== 'approval' || request.kind !== 'approval') return links;
    const target = {
      sessionId,
      interactionRef: interaction.ref,
      tool: interaction.tool,
      summary: interaction.summary,
      action: approvalAction(request),
    };
    return {
      ...links,
      approve: `${this.baseUrl}/v1/links/${this.options.links.mint(target, 'approve')}`,
      deny: `${this.baseUrl}/v1/links/${this.options.links.mint(target, 'deny')}`,
    };
  }

  private async sendRequested(event: RequestedEvent): Promise<void> {
    if (!this.wanted('interaction_requested')) return;
    const snapshot = await this.snapshot(event.sessionId);
    const interaction = summarizeInteraction(event.interactionRef, event.request);
    // Answered while the snapshot was read: no links to mint for it.
    if (!isPending(snapshot, event.interactionRef)) return;
    this.send('interaction_requested', this.receiversOf('interaction_requested'), {
      event,
      snapshot,
      extra: { interaction },
      links: this.interactionLinks(event.sessionId, interaction, event.request),
    });
  }

  private async sendWaiting(event: RequestedEvent, thresholdMs: number): Promise<void> {
    if (this.closed) return;
    const snapshot = await this.snapshot(event.sessionId);
    if (!isPending(snapshot, event.interactionRef)) return;
    const interaction = summarizeInteraction(event.interactionRef, event.request);
    this.send(
      'session_waiting',
      this.receiversOf('session_waiting', (receiver) => receiver.sessionWaitingMs === thresholdMs),
      {
        event,
        snapshot,
        extra: { interaction, waitingSeconds: Math.round(thresholdMs / 1000) },
        links: this.interactionLinks(event.sessionId, interaction, event.request),
        // The reminder is its own event: it happens now, not when the question was asked.
        at: new Date().toISOString(),
      },
    );
  }

  private send(
    kind: NotificationKind,
    receivers: readonly NotifierReceiver[],
    parts: {
      event: ProtocolEvent & { runId?: string };
      snapshot: SessionSnapshot | null;
      extra: Partial<NotificationBody>;
      links: NotificationLinks;
      /** When what is told happened (default: the event's time); the delivery delay counts from it. */
      at?: string;
    },
  ): void {
    if (this.closed || receivers.length === 0) return;
    const body: NotificationBody = {
      version: 1,
      id: newNotificationId(),
      kind,
      at: parts.at ?? parts.event.at,
      session: sessionFacts(parts.event.sessionId, parts.snapshot),
      runId: parts.event.runId ?? null,
      ...parts.extra,
      links: parts.links,
    };
    const eventAt = Date.parse(body.at);
    const outgoing = {
      id: body.id,
      kind,
      body: JSON.stringify(body),
      eventAt: Number.isFinite(eventAt) ? eventAt : Date.now(),
    };
    for (const receiver of receivers) this.receivers.get(receiver.name)?.queue.push(outgoing);
  }
}

function isPending(snapshot: SessionSnapshot | null, interactionRef: string): boolean {
  return (
    snapshot?.pendingInteractions.some(
      (interaction) => interaction.interactionRef === interactionRef && interaction.status === 'pending',
    ) ?? false
  );
}
