import { type ProtocolEvent, RunOutcome, SessionState } from '@tether/protocol';
import type { AgentRuntime } from '@tether/runtime';
import { Histogram, type MetricFamily, renderMetrics } from './prometheus-text.js';

// Seconds a host takes to answer a prompt: from an instant (policy) to a person away for an hour.
const answerBuckets = [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900, 3600];

/**
 * The daemon's counters. Event counters come from runtime.observe (every published event, after it
 * is stored), so they count what happened since this daemon started; session states are read from
 * the runtime at scrape time.
 */
export class DaemonMetrics {
  private readonly runtime: AgentRuntime;
  private readonly runsByOutcome = new Map<string, number>(RunOutcome.options.map((outcome) => [outcome, 0]));
  private eventsAppended = 0;
  /** Sessions whose agent process was seen to start and not yet to stop. */
  private readonly sessionsWithProcess = new Set<string>();
  /** When each open interaction was requested (ms since epoch), by reference. */
  private readonly requestedAt = new Map<string, number>();
  private readonly answerSeconds = new Histogram(answerBuckets);
  private readonly httpRequests = new Map<string, { route: string; status: string; count: number }>();
  private subscriberCount = 0;
  private readonly stopObserving: () => void;

  constructor(runtime: AgentRuntime) {
    this.runtime = runtime;
    this.stopObserving = runtime.observe((event) => this.record(event));
  }

  stop(): void {
    this.stopObserving();
  }

  subscriberOpened(): void {
    this.subscriberCount += 1;
  }

  subscriberClosed(): void {
    this.subscriberCount = Math.max(0, this.subscriberCount - 1);
  }

  /** `route` is the route pattern (never the raw path, so ids cannot blow up the label set). */
  countRequest(route: string, status: number): void {
    const key = `${route} ${status}`;
    const entry = this.httpRequests.get(key);
    if (entry) entry.count += 1;
    else this.httpRequests.set(key, { route, status: String(status), count: 1 });
  }

  private record(event: ProtocolEvent): void {
    this.eventsAppended += 1;
    switch (event.type) {
      case 'run.completed':
        this.runsByOutcome.set(event.outcome, (this.runsByOutcome.get(event.outcome) ?? 0) + 1);
        break;
      case 'session.process_started':
        this.sessionsWithProcess.add(event.sessionId);
        break;
      case 'session.process_stopped':
        this.sessionsWithProcess.delete(event.sessionId);
        break;
      case 'interaction.requested':
        this.requestedAt.set(event.interactionRef, Date.parse(event.at));
        break;
      case 'interaction.settled': {
        const requested = this.requestedAt.get(event.interactionRef);
        this.requestedAt.delete(event.interactionRef);
        if (requested !== undefined) this.answerSeconds.observe(Math.max(0, Date.parse(event.at) - requested) / 1000);
        break;
      }
      case 'interaction.cancelled':
      case 'interaction.withdrawn':
      case 'interaction.send_failed':
        this.requestedAt.delete(event.interactionRef);
        break;
      default:
        break;
    }
  }

  async render(): Promise<string> {
    const counts = await this.runtime.countSessionsByState();
    const sessionsByState = new Map<string, number>(SessionState.options.map((state) => [state, counts[state]]));
    const families: MetricFamily[] = [
      { name: 'tether_sessions', help: 'Sessions by state.', type: 'gauge', samples: [...sessionsByState].map(([state, value]) => ({ labels: { state }, value })) },
      { name: 'tether_runs_total', help: 'Runs completed since the daemon started, by outcome.', type: 'counter', samples: [...this.runsByOutcome].map(([outcome, value]) => ({ labels: { outcome }, value })) },
      { name: 'tether_processes_active', help: 'Agent processes running.', type: 'gauge', samples: [{ value: this.sessionsWithProcess.size }] },
      { name: 'tether_events_appended_total', help: 'Events stored and published since the daemon started.', type: 'counter', samples: [{ value: this.eventsAppended }] },
      { name: 'tether_subscribers', help: 'Open event subscriptions (SSE streams and WebSocket subscriptions).', type: 'gauge', samples: [{ value: this.subscriberCount }] },
      { name: 'tether_interaction_answer_seconds', help: 'Time from interaction.requested to interaction.settled.', type: 'histogram', samples: this.answerSeconds.samples() },
      {
        name: 'tether_http_requests_total',
        help: 'HTTP requests answered, by route pattern and status.',
        type: 'counter',
        samples: [...this.httpRequests.values()].map((entry) => ({ labels: { route: entry.route, status: entry.status }, value: entry.count })),
      },
    ];
    return renderMetrics(families);
  }
}
