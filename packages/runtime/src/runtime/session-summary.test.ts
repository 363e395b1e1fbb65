import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  type MockTurnContext,
  collectUntil,
  createMockProvider,
  waitForEvent,
  sampleApprovalRequest,
} from '@tether/testkit';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createInMemoryStore } from '../store/in-memory-store.js';
import { createAgentRuntime } from './agent-runtime.js';

let workspace: string;

beforeEach(async () => {
  workspace = await mkdtemp(path.join(os.tmpdir(), 'tether-runtime-summary-'));
});

afterEach(async () => {
  vi.useRealTimers();
  await rm(workspace, { recursive: true, force: true });
});

const text = (value: string) => [{ type: 'text' as const, text: value }];

/** Turns the test finishes by hand, to hold a run open. */
function heldTurns() {
  const waiters: ((turn: MockTurnContext) => void)[] = [];
  const turns: MockTurnContext[] = [];
  return {
    script: (context: MockTurnContext) => {
      const waiter = waiters.shift();
      if (waiter) waiter(context);
      else turns.push(context);
    },
    next: () =>
      new Promise<MockTurnContext>((resolve) => (turns.length > 0 ? resolve(turns.shift()!) : waiters.push(resolve))),
  };
}

describe('a session snapshot: title and last run', () => {
  it('is titled by its first turn (not a control), collapsed; the last run follows every completion', async () => {
    const runtime = await createAgentRuntime({
      providers: [
        createMockProvider({
          turn: ({ runId, emit, input }) =>
            emit({
              type: 'run.completed',
              runId,
              outcome: JSON.stringify(input[0]).includes('fail') ? 'failed' : 'succeeded',
            }),
        }),
      ],
    });
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: workspace } });
    expect(await runtime.getSession(sessionId)).toMatchObject({ title: null, lastRun: null });

    const control = await runtime.dispatch({ type: 'run_control', commandId: 'control-1', sessionId, name: 'compact' });
    const controlRun = await runtime.waitForRun(control.runId);
    expect(await runtime.getSession(sessionId)).toMatchObject({
      title: null,
      lastRun: { runId: control.runId, outcome: 'succeeded', completedAt: controlRun.completedAt },
    });

    const first = await runtime.submitTurn({
      sessionId,
      input: [...text('  Please\n\nfail   this'), ...text('once ')],
    });
    const firstRun = await runtime.waitForRun(first.runId);
    const second = await runtime.submitTurn({ sessionId, input: text('A second turn names nothing') });
    const secondRun = await runtime.waitForRun(second.runId);

    const [listed] = await runtime.listSessions();
    expect(listed).toMatchObject({
      title: 'Please fail this once',
      lastRun: { runId: second.runId, outcome: 'succeeded', completedAt: secondRun.completedAt },
    });
    expect(firstRun.outcome).toBe('failed');
    expect(await runtime.getSession(sessionId)).toEqual(listed);
    await runtime.shutdown();
  });

  it('gives a long first turn a title of 200 characters ending in an ellipsis', async () => {
    const runtime = await createAgentRuntime({ providers: [createMockProvider()] });
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: workspace } });
    await runtime.waitForRun((await runtime.submitTurn({ sessionId, input: text('word '.repeat(1_000)) })).runId);
    const { title } = await runtime.getSession(sessionId);
    expect(title).toHaveLength(200);
    expect(title!.endsWith(' word…')).toBe(true);
    await runtime.shutdown();
  });

  it('stays untitled while turns are redacted (as their events are), and takes the first turn recorded with its text', async () => {
    const runtime = await createAgentRuntime({ providers: [createMockProvider()] });
    const { sessionId } = await runtime.openSession({
      workspace: { kind: 'directory', path: workspace },
      redactInput: true,
    });
    const redacted = await runtime.submitTurn({ sessionId, input: text('secret plan') });
    await runtime.waitForRun(redacted.runId);
    const snapshot = await runtime.getSession(sessionId);
    expect(snapshot).toMatchObject({ title: null, lastRun: { runId: redacted.runId, outcome: 'succeeded' } });
    expect(JSON.stringify(await runtime.listSessions())).not.toContain('secret plan');

    // The host lets this one turn be recorded: its text is in the log, so it may name the session.
    const shown = await runtime.submitTurn({ sessionId, input: text('Shown on purpose'), redactInput: false });
    await runtime.waitForRun(shown.runId);
    expect((await runtime.getSession(sessionId)).title).toBe('Shown on purpose');
    await runtime.shutdown();
  });

  it('titles an ephemeral session like any other: it only keeps no conversation on the provider side', async () => {
    const runtime = await createAgentRuntime({ providers: [createMockProvider()] });
    const { sessionId } = await runtime.openSession({
      workspace: { kind: 'directory', path: workspace },
      ephemeral: true,
    });
    await runtime.waitForRun((await runtime.submitTurn({ sessionId, input: text('Quick question') })).runId);
    expect(await runtime.getSession(sessionId)).toMatchObject({ ephemeral: true, title: 'Quick question' });
    await runtime.shutdown();
  });

  it('records runs ended by a close and by a restart as the last run, and keeps both after a restart', async () => {
    const store = createInMemoryStore();
    const turns = heldTurns();
    const first = await createAgentRuntime({ providers: [createMockProvider({ turn: turns.script })], store });
    const closing = await first.openSession({ workspace: { kind: 'directory', path: workspace } });
    const closedRun = await first.submitTurn({ sessionId: closing.sessionId, input: text('Closed mid-run') });
    await turns.next();
    await first.closeSession({ sessionId: closing.sessionId });
    const crashing = await first.openSession({ workspace: { kind: 'directory', path: workspace } });
    const crashedRun = await first.submitTurn({ sessionId: crashing.sessionId, input: text('Left running') });
    await turns.next();

    // The first runtime "dies" without shutting down; a second one loads the same store.
    const second = await createAgentRuntime({ providers: [createMockProvider()], store });
    expect(await second.getSession(closing.sessionId)).toMatchObject({
      state: 'closed',
      title: 'Closed mid-run',
      lastRun: { runId: closedRun.runId, outcome: 'interrupted' },
    });
    expect(await second.getSession(crashing.sessionId)).toMatchObject({
      state: 'idle',
      title: 'Left running',
      lastRun: { runId: crashedRun.runId, outcome: 'failed' },
    });
    await second.shutdown();
  });
});

describe('a session snapshot: last activity', () => {
  const minute = (value: number) => `2026-12-01T10:${String(value).padStart(2, '0')}:00.000Z`;
  const approval = sampleApprovalRequest({ defaultToNo: false });

  it('moves with output and interactions, not with process or diagnostic housekeeping; updatedAt does the reverse', async () => {
    // Only the clock is faked: the log's own timers run as usual.
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(minute(1));
    const turns = heldTurns();
    const runtime = await createAgentRuntime({ providers: [createMockProvider({ turn: turns.script })] });
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: workspace } });
    expect(await runtime.getSession(sessionId)).toMatchObject({
      createdAt: minute(1),
      updatedAt: minute(1),
      lastActivityAt: minute(1),
    });

    vi.setSystemTime(minute(2));
    const { runId } = await runtime.submitTurn({ sessionId, input: text('Go') });
    const turn = await turns.next();

    vi.setSystemTime(minute(3));
    turn.emit({ type: 'run.message_delta', runId, blockId: 'block-1', text: 'Working' });
    await waitForEvent(runtime, sessionId, 'run.message_delta');
    expect(await runtime.getSession(sessionId)).toMatchObject({ updatedAt: minute(2), lastActivityAt: minute(3) });

    vi.setSystemTime(minute(4));
    turn.emit({ type: 'interaction.requested', runId, interactionRef: `int_${'1'.repeat(32)}`, request: approval });
    await waitForEvent(runtime, sessionId, 'interaction.requested');
    expect(await runtime.getSession(sessionId)).toMatchObject({ state: 'waiting', lastActivityAt: minute(4) });

    vi.setSystemTime(minute(5));
    turn.emit({ type: 'session.process_started', pid: 4242, startTime: null, marker: 'marker' });
    turn.emit({ type: 'diagnostic', level: 'warning', code: 'test.note' });
    await waitForEvent(runtime, sessionId, 'diagnostic');
    expect(await runtime.getSession(sessionId)).toMatchObject({ updatedAt: minute(5), lastActivityAt: minute(4) });

    vi.setSystemTime(minute(6));
    await runtime.interruptRun({ sessionId });
    turn.emit({ type: 'run.completed', runId, outcome: 'interrupted' });
    await runtime.waitForRun(runId);
    expect(await runtime.getSession(sessionId)).toMatchObject({
      lastActivityAt: minute(6),
      lastRun: { runId, outcome: 'interrupted', completedAt: minute(6) },
    });

    vi.setSystemTime(minute(7));
    turn.emit({ type: 'session.process_stopped', reason: 'idle' });
    await collectUntil(runtime, sessionId, (event) => event.type === 'session.process_stopped');
    expect(await runtime.getSession(sessionId)).toMatchObject({ updatedAt: minute(7), lastActivityAt: minute(6) });
    await runtime.shutdown();
  });
});
