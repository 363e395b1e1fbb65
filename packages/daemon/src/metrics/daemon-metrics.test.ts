import { type ProtocolEvent, SessionState } from '@tether/protocol';
import { describe, expect, it } from 'vitest';
import { DaemonMetrics } from './daemon-metrics.js';

const sessionId = `ses_${'a'.repeat(32)}`;
const runId = `run_${'b'.repeat(32)}`;
const interactionRef = `int_${'c'.repeat(32)}`;
const approval = {
  kind: 'approval',
  toolName: 'Bash',
  toolUseId: 'toolu-1',
  category: 'command',
  input: { command: 'ls' },
  offerSessionApproval: true,
  defaultToNo: false,
} as const;

/** A runtime that only publishes what the test hands it and reports two idle sessions. */
function fakeRuntime() {
  const listeners = new Set<(event: ProtocolEvent) => void>();
  return {
    observe(listener: (event: ProtocolEvent) => void) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    countSessionsByState: async () =>
      ({ ...Object.fromEntries(SessionState.options.map((state) => [state, 0])), idle: 2 }) as Record<
        SessionState,
        number
      >,
    publish: (event: ProtocolEvent) => listeners.forEach((listener) => listener(event)),
    listenerCount: () => listeners.size,
  };
}

describe('DaemonMetrics', () => {
  it('counts runs, events, processes, subscribers and requests, and times answers in a histogram', async () => {
    const runtime = fakeRuntime();
    const metrics = new DaemonMetrics(runtime);
    runtime.publish({
      type: 'session.process_started',
      sessionId,
      seq: 1,
      at: '2026-12-01T10:00:00.000Z',
      pid: 42,
      startTime: null,
      marker: 'm',
    });
    runtime.publish({
      type: 'interaction.requested',
      sessionId,
      seq: 2,
      at: '2026-12-01T10:00:00.000Z',
      runId,
      interactionRef,
      request: approval,
    });
    runtime.publish({
      type: 'interaction.settled',
      sessionId,
      seq: 3,
      at: '2026-12-01T10:00:03.000Z',
      runId,
      interactionRef,
      outcome: 'approved',
      answer: { decision: 'approve' },
      by: 'host',
    });
    runtime.publish({
      type: 'run.completed',
      sessionId,
      seq: 4,
      at: '2026-12-01T10:00:04.000Z',
      runId,
      outcome: 'succeeded',
    });
    metrics.subscriberOpened();
    metrics.subscriberOpened();
    metrics.subscriberClosed();
    metrics.countRequest('/v1/sessions/:id', 404);

    const text = await metrics.render();
    expect(text).toContain('# TYPE tether_runs_total counter');
    expect(text).toContain('tether_runs_total{outcome="succeeded"} 1');
    expect(text).toContain('tether_runs_total{outcome="failed"} 0');
    expect(text).toContain('tether_events_appended_total 4');
    expect(text).toContain('tether_sessions{state="idle"} 2');
    expect(text).toContain('tether_sessions{state="running"} 0');
    expect(text).toContain('tether_processes_active 1');
    expect(text).toContain('tether_subscribers 1');
    expect(text).toContain('tether_http_requests_total{route="/v1/sessions/:id",status="404"} 1');
    expect(text).toContain('# TYPE tether_interaction_answer_seconds histogram');
    expect(text).toContain('tether_interaction_answer_seconds_bucket{le="2.5"} 0');
    expect(text).toContain('tether_interaction_answer_seconds_bucket{le="5"} 1');
    expect(text).toContain('tether_interaction_answer_seconds_bucket{le="+Inf"} 1');
    expect(text).toContain('tether_interaction_answer_seconds_sum 3');
    expect(text).toContain('tether_interaction_answer_seconds_count 1');
    metrics.stop();
    expect(runtime.listenerCount()).toBe(0);
  });

  it('adds the process metrics, and two daemons in one process count apart', async () => {
    const first = fakeRuntime();
    const second = fakeRuntime();
    const firstMetrics = new DaemonMetrics(first);
    const secondMetrics = new DaemonMetrics(second);
    first.publish({
      type: 'run.completed',
      sessionId,
      seq: 1,
      at: '2026-12-01T10:00:00.000Z',
      runId,
      outcome: 'failed',
    });
    const firstText = await firstMetrics.render();
    const secondText = await secondMetrics.render();
    expect(firstText).toContain('tether_runs_total{outcome="failed"} 1');
    expect(secondText).toContain('tether_runs_total{outcome="failed"} 0');
    for (const text of [firstText, secondText]) {
      expect(text).toContain('# TYPE process_cpu_seconds_total counter');
      expect(text).toMatch(/^process_resident_memory_bytes [1-9]/m);
      expect(text).toMatch(/^nodejs_heap_size_used_bytes [1-9]/m);
      expect(text).toContain('# TYPE nodejs_eventloop_lag_seconds gauge');
    }
    firstMetrics.stop();
    secondMetrics.stop();
  });
  it('counts waiting follow-ups by delivery and keeps the latest plan limits per window, with bounded labels', async () => {
    const runtime = fakeRuntime();
    const metrics = new DaemonMetrics(runtime);
    const at = '2026-12-01T10:00:00.000Z';
    const inputId = (digit: string) => `inp_${digit.repeat(32)}`;
    const queued = (seq: number, id: string, delivery: 'after_turn' | 'steer') =>
      runtime.publish({
        type: 'input.queued',
        sessionId,
        seq,
        at,
        inputId: id,
        delivery,
        runId,
        input: null,
        inputRedacted: true,
      });
    queued(1, inputId('1'), 'after_turn');
    queued(2, inputId('2'), 'after_turn');
    queued(3, inputId('3'), 'steer');
    runtime.publish({ type: 'input.started', sessionId, seq: 4, at, runId, inputId: inputId('1') });
    runtime.publish({ type: 'input.folded', sessionId, seq: 5, at, runId, inputId: inputId('3') });
    runtime.publish({ type: 'run.queued', sessionId, seq: 6, at, runId, position: 0 });
    let text = await metrics.render();
    expect(text).toContain('tether_runs_waiting_for_process 1');
    runtime.publish({
      type: 'session.process_started',
      sessionId,
      seq: 7,
      at,
      pid: 4242,
      startTime: null,
      marker: 'm',
    });
    text = await metrics.render();
    expect(text).toContain('tether_runs_waiting_for_process 0');
    expect(text).toContain('tether_queued_inputs{delivery="after_turn"} 1');
    expect(text).toContain('tether_queued_inputs{delivery="steer"} 0');
    expect(text).toContain('tether_plan_limits_available 0');

    const limits = (windows: unknown[]) =>
      runtime.publish({
        type: 'session.limits_changed',
        sessionId,
        seq: 6,
        at,
        limits: { available: true, unavailableReason: null, windows, reportedAt: at },
      } as ProtocolEvent);
    limits([
      { window: 'five_hour', status: 'allowed_warning', usedPercent: 42, resetsAt: '2026-12-01T14:00:00.000Z' },
      { window: 'seven_day', status: 'allowed', usedPercent: null, resetsAt: null },
      { window: 'ses_not a window "name"', status: 'allowed', usedPercent: 1, resetsAt: null },
    ]);
    text = await metrics.render();
    expect(text).toContain('tether_plan_limits_available 1');
    expect(text).toContain('tether_plan_limit_used_percent{window="five_hour"} 42');
    expect(text).toContain(
      `tether_plan_limit_resets_at_seconds{window="five_hour"} ${Date.parse('2026-12-01T14:00:00Z') / 1000}`,
    );
    expect(text).not.toContain('seven_day"} ');
    expect(text).not.toContain('not a window');

    // The next report replaces the windows; an API-key account has none.
    runtime.publish({
      type: 'input.cancelled',
      sessionId,
      seq: 7,
      at,
      runId,
      inputId: inputId('2'),
      reason: 'session_closed',
    });
    runtime.publish({
      type: 'session.limits_changed',
      sessionId,
      seq: 8,
      at,
      limits: { available: false, unavailableReason: 'api_key_account', windows: [], reportedAt: at },
    });
    text = await metrics.render();
    expect(text).toContain('tether_plan_limits_available 0');
    expect(text).not.toContain('five_hour');
    expect(text).toContain('tether_queued_inputs{delivery="after_turn"} 0');
    metrics.stop();
  });

  it("forgets what it counted of sessions another daemon took over: their ends are that daemon's to publish", async () => {
    const runtime = fakeRuntime();
    const metrics = new DaemonMetrics(runtime);
    const at = '2026-12-01T10:00:00.000Z';
    const other = `ses_${'d'.repeat(32)}`;
    for (const [seq, session] of [
      [1, sessionId],
      [2, other],
    ] as const) {
      runtime.publish({
        type: 'session.process_started',
        sessionId: session,
        seq,
        at,
        pid: 42,
        startTime: null,
        marker: 'm',
      });
      runtime.publish({
        type: 'input.queued',
        sessionId: session,
        seq: seq + 10,
        at,
        inputId: `inp_${String(seq).repeat(32)}`,
        delivery: 'after_turn',
        runId,
        input: null,
        inputRedacted: true,
      });
    }
    runtime.publish({ type: 'run.queued', sessionId, seq: 20, at, runId, position: 0 });
    let text = await metrics.render();
    expect(text).toContain('tether_processes_active 2');
    expect(text).toContain('tether_queued_inputs{delivery="after_turn"} 2');
    metrics.forgetSessions([sessionId]);
    text = await metrics.render();
    expect(text).toContain('tether_processes_active 1');
    expect(text).toContain('tether_queued_inputs{delivery="after_turn"} 1');
    expect(text).toContain('tether_runs_waiting_for_process 0');
    metrics.stop();
  });
});
