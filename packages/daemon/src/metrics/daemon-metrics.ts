import { InputDelivery, type PlanLimits, type ProtocolEvent, RunOutcome, SessionState } from '@tether/protocol';
import type { AgentRuntime, SessionCounts, TetherStore } from '@tether/runtime';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Prometheus text exposition format 0.0.4. */
export const prometheusContentType = Registry.PROMETHEUS_CONTENT_TYPE;

// Seconds a host takes to answer a prompt: from an instant (policy) to a person away for an hour.
const answerBuckets = [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900, 3600];

// A window's name becomes a label value: only short snake_case names, and no more than this many of them.
const windowName = /^[a-z0-9_]{1,40}$/;
const maxWindows = 20;

let processRegistry: Registry | undefined;

/**
 * prom-client's process and Node.js metrics (CPU, memory, file descriptors, event loop lag, GC),
 * registered once per process: they describe the process, not one daemon, and their collectors
 * (an event-loop-delay monitor, a GC observer) cannot be stopped, so one set per daemon would leak.
 */
function processMetrics(): Registry {
  if (processRegistry === undefined) {
    processRegistry = new Registry();
    // Event-loop delay sampled every 100 ms, not prom-client's 10: an idle daemon then wakes 10 times a second, not 100.
    collectDefaultMetrics({ register: processRegistry, eventLoopMonitoringPrecision: 100 });
  }
  return processRegistry;
}

/**
 * The daemon's metrics, in a Registry of its own (never prom-client's global one, so two daemons in
 * one process count apart). Event counters come from runtime.observe (every published event, after
 * it is stored), so they count what happened since this daemon started; session states are read
 * from the runtime at scrape time.
 */
export class DaemonMetrics {
  private readonly registry = new Registry();
  /** The daemon's own metrics and the process's, as one scrape. */
  private exposed: Registry;
  private readonly runs = new Counter({
    name: 'tether_runs_total',
    help: 'Runs completed since the daemon started, by outcome.',
    labelNames: ['outcome'],
    registers: [this.registry],
  });
  private readonly answerSeconds = new Histogram({
    name: 'tether_interaction_answer_seconds',
    help: 'Time from interaction.requested to interaction.settled.',
    buckets: answerBuckets,
    registers: [this.registry],
  });
  private readonly httpRequests = new Counter({
    name: 'tether_http_requests_total',
    help: 'HTTP requests answered, by route pattern and status.',
    labelNames: ['route', 'status'],
    registers: [this.registry],
  });
  private readonly limitUsed = new Gauge({
    name: 'tether_plan_limit_used_percent',
    help: 'How much of each plan-limit window is used (0-100, more with overage), as the agent last reported it for any session.',
    labelNames: ['window'],
    registers: [this.registry],
  });
  private readonly limitResets = new Gauge({
    name: 'tether_plan_limit_resets_at_seconds',
    help: 'When each plan-limit window resets (unix time), as last reported.',
    labelNames: ['window'],
    registers: [this.registry],
  });
  private readonly limitsAvailable = new Gauge({
    name: 'tether_plan_limits_available',
    help: '1 when the account reports plan limits, 0 when it has none (an API-key account) or no agent reported yet.',
    registers: [this.registry],
  });
  /** Follow-ups queued or steered and not yet started, folded in or cancelled, by id and how they were sent. */
  private readonly queuedInputs = new Map<string, { readonly delivery: InputDelivery; readonly sessionId: string }>();
  /** Runs waiting for an agent process slot (run.queued), by run id, with their session: until it starts one or the run ends. */
  private readonly runsWaitingForProcess = new Map<string, string>();
  /** Sessions whose agent process was seen to start and not yet to stop. */
  private readonly sessionsWithProcess = new Set<string>();
  /** When each open interaction was requested (ms since epoch), by reference, with its session. */
  private readonly requestedAt = new Map<string, { readonly at: number; readonly sessionId: string }>();
  private subscriberCount = 0;
  // A plain number on the publish path (every event passes here; a prom-client inc allocates), copied at scrape time.
  private eventsAppended = 0;
  private readonly stopObserving: () => void;

  constructor(
    runtime: Pick<AgentRuntime, 'observe' | 'countSessionsByState'>,
    store: Pick<TetherStore, 'coordination'> = {},
  ) {
    for (const outcome of RunOutcome.options) this.runs.inc({ outcome }, 0);
    const countHeld = store.coordination?.countHeldSessionsByState?.bind(store.coordination);
    this.registerSessionGauges(runtime, countHeld);
    const processes = new Gauge({
      name: 'tether_processes_active',
      help: 'Agent processes running.',
      registers: [this.registry],
      collect: (): void => processes.set(this.sessionsWithProcess.size),
    });
    const events = new Counter({
      name: 'tether_events_appended_total',
      help: 'Events stored and published since the daemon started.',
      registers: [this.registry],
      collect: (): void => {
        events.reset();
        events.inc(this.eventsAppended);
      },
    });
    const subscribers = new Gauge({
      name: 'tether_subscribers',
      help: 'Open event subscriptions (SSE streams and WebSocket subscriptions).',
      registers: [this.registry],
      collect: (): void => subscribers.set(this.subscriberCount),
    });
    const queued = new Gauge({
      name: 'tether_queued_inputs',
      help: 'Follow-ups waiting across open sessions (queued as a next run, or steered and not yet taken in), by delivery.',
      labelNames: ['delivery'],
      registers: [this.registry],
      collect: (): void => {
        const counts = new Map(InputDelivery.options.map((delivery) => [delivery, 0]));
        for (const { delivery } of this.queuedInputs.values()) counts.set(delivery, (counts.get(delivery) ?? 0) + 1);
        for (const [delivery, count] of counts) queued.set({ delivery }, count);
      },
    });
    const waiting = new Gauge({
      name: 'tether_runs_waiting_for_process',
      help: 'Runs waiting for an agent process slot (the provider is at maxProcesses).',
      registers: [this.registry],
      collect: (): void => waiting.set(this.runsWaitingForProcess.size),
    });
    this.exposed = Registry.merge([this.registry, processMetrics()]);
    this.stopObserving = runtime.observe((event) => this.record(event));
  }

  stop(): void {
    this.stopObserving();
  }

  /**
   * tether_sessions: this daemon's sessions. Alone on its store, that is every session; on a store
   * daemons share, the open ones it drives (holds the lease of), so summing the daemons' scrapes
   * counts each session once, and the store's counts (the same on every daemon) go to
   * tether_store_sessions, without the closed state in tether_sessions, which no daemon holds.
   */
  private registerSessionGauges(
    runtime: Pick<AgentRuntime, 'countSessionsByState'>,
    countHeld: (() => Promise<SessionCounts>) | undefined,
  ): void {
    const sessions = new Gauge({
      name: 'tether_sessions',
      help: countHeld
        ? 'Open sessions this daemon drives (holds the lease of), by state; all daemons sharing the store add up to every open session.'
        : "Sessions in this daemon's store, by state: all its own.",
      labelNames: ['state'],
      registers: [this.registry],
      async collect() {
        if (countHeld === undefined) {
          const counts = await runtime.countSessionsByState();
          for (const state of SessionState.options) sessions.set({ state }, counts[state]);
          return;
        }
        const counts = await countHeld();
        for (const state of SessionState.options) if (state !== 'closed') sessions.set({ state }, counts[state]);
      },
    });
    if (countHeld === undefined) return;
    const stored = new Gauge({
      name: 'tether_store_sessions',
      help: "Sessions in the store several daemons share, by state, every daemon's: each reports the same numbers, so aggregate with max, not sum.",
      labelNames: ['state'],
      registers: [this.registry],
      async collect() {
        const counts = await runtime.countSessionsByState();
        for (const state of SessionState.options) stored.set({ state }, counts[state]);
      },
    });
  }

  /** Metrics kept by another part of the daemon (notifications), in the same scrape. */
  expose(registry: Registry): void {
    this.exposed = Registry.merge([this.exposed, registry]);
  }

  /**
   * Sessions another daemon took over (this one lost their leases): the events that end their agent,
   * follow-ups and prompts are that daemon's to publish, so what this one counted of them goes now.
   */
  forgetSessions(sessionIds: readonly string[]): void {
    const lost = new Set(sessionIds);
    for (const sessionId of lost) this.sessionsWithProcess.delete(sessionId);
    for (const [runId, sessionId] of this.runsWaitingForProcess)
      if (lost.has(sessionId)) this.runsWaitingForProcess.delete(runId);
    for (const [inputId, input] of this.queuedInputs) if (lost.has(input.sessionId)) this.queuedInputs.delete(inputId);
    for (const [ref, requested] of this.requestedAt) if (lost.has(requested.sessionId)) this.requestedAt.delete(ref);
  }

  subscriberOpened(): void {
    this.subscriberCount += 1;
  }

  subscriberClosed(): void {
    this.subscriberCount = Math.max(0, this.subscriberCount - 1);
  }

  /** `route` is the route pattern (never the raw path, so ids cannot blow up the label set). */
  countRequest(route: string, status: number): void {
    this.httpRequests.inc({ route, status: String(status) });
  }

  private record(event: ProtocolEvent): void {
    this.eventsAppended += 1;
    switch (event.type) {
      case 'run.completed':
        this.runs.inc({ outcome: event.outcome });
        this.runsWaitingForProcess.delete(event.runId);
        break;
      case 'run.queued':
        this.runsWaitingForProcess.set(event.runId, event.sessionId);
        break;
      case 'session.process_started':
        this.sessionsWithProcess.add(event.sessionId);
        for (const [waitingRunId, sessionOfRun] of this.runsWaitingForProcess)
          if (sessionOfRun === event.sessionId) this.runsWaitingForProcess.delete(waitingRunId);
        break;
      case 'session.process_stopped':
        this.sessionsWithProcess.delete(event.sessionId);
        break;
      case 'interaction.requested':
        this.requestedAt.set(event.interactionRef, { at: Date.parse(event.at), sessionId: event.sessionId });
        break;
      case 'interaction.settled': {
        const requested = this.requestedAt.get(event.interactionRef);
        this.requestedAt.delete(event.interactionRef);
        if (requested !== undefined)
          this.answerSeconds.observe(Math.max(0, Date.parse(event.at) - requested.at) / 1000);
        break;
      }
      case 'interaction.cancelled':
      case 'interaction.withdrawn':
      case 'interaction.send_failed':
        this.requestedAt.delete(event.interactionRef);
        break;
      case 'input.queued':
        this.queuedInputs.set(event.inputId, { delivery: event.delivery, sessionId: event.sessionId });
        break;
      case 'input.started':
      case 'input.folded':
      case 'input.cancelled':
        this.queuedInputs.delete(event.inputId);
        break;
      case 'session.limits_changed':
        this.recordLimits(event.limits);
        break;
      default:
        break;
    }
  }

  /** The latest report replaces the last: a window it no longer names is dropped. */
  private recordLimits(limits: PlanLimits): void {
    // A session that has not heard from the agent yet says nothing about the account.
    if (!limits.available && limits.unavailableReason === 'not_reported') return;
    this.limitsAvailable.set(limits.available ? 1 : 0);
    this.limitUsed.reset();
    this.limitResets.reset();
    const windows = limits.windows.filter((window) => windowName.test(window.window)).slice(0, maxWindows);
    for (const window of windows) {
      if (window.usedPercent !== null) this.limitUsed.set({ window: window.window }, window.usedPercent);
      const resetsAt = window.resetsAt === null ? Number.NaN : Date.parse(window.resetsAt);
      if (!Number.isNaN(resetsAt)) this.limitResets.set({ window: window.window }, Math.floor(resetsAt / 1000));
    }
  }

  /** The Prometheus text of this daemon's metrics and the process's. */
  render(): Promise<string> {
    return this.exposed.metrics();
  }
}
