import { AgentError, type ProtocolEvent } from '@tether/protocol';
import {
  type MockTurnContext,
  agentErrorOf,
  createMockProvider,
  replyWith,
  waitForEvent,
  sampleApprovalRequest,
} from '@tether/testkit';
import { describe, expect, it } from 'vitest';
import { createInMemoryStore } from '../store/in-memory-store.js';
import type { TetherStore } from '../store/tether-store.js';
import { runtimePerTest } from './runtime-per-test.test-helper.js';
import type { AgentRuntime } from './runtime-types.js';

// The store stops taking writes while a run streams (a full disk): the run must end failed
// store_failure, in the store, exactly once; memory must never show what the store does not hold.

const perTest = runtimePerTest('tether-store-failure-');

/**
 * An in-memory store whose commits fail (as SQLite's do on a full disk) while `full`, or for the
 * next `failNext` commits. Closing it keeps its contents, so a second runtime can open it.
 */
function storeThatFills() {
  const inner = createInMemoryStore();
  const control = { full: false, failNext: 0, failedCommits: 0, firstFailureAt: 0, readsFail: false };
  const gone = () => new AgentError({ code: 'store_failure', message: 'connection refused' });
  const store: TetherStore = {
    ...inner,
    async getSession(sessionId) {
      if (control.readsFail) throw gone();
      return inner.getSession(sessionId);
    },
    async commit(unit) {
      if (control.full || control.failNext > 0) {
        control.failNext = Math.max(0, control.failNext - 1);
        control.failedCommits += 1;
        control.firstFailureAt ||= performance.now();
        throw new AgentError({ code: 'store_failure', message: 'database or disk is full' });
      }
      await inner.commit(unit);
    },
    async close() {},
  };
  return { store, control };
}

const approval = sampleApprovalRequest();
const interactionRef = `int_${'1'.repeat(32)}`;

/** A runtime whose first turn asks for an approval and is then held by the test; later turns answer "ok". */
async function streamingRun() {
  const { store, control } = storeThatFills();
  let held!: (turn: MockTurnContext) => void;
  const firstTurn = new Promise<MockTurnContext>((resolve) => (held = resolve));
  let turns = 0;
  const provider = createMockProvider({
    turn: (context) => {
      turns += 1;
      if (turns > 1) return replyWith('ok')(context);
      context.emit({ type: 'interaction.requested', runId: context.runId, interactionRef, request: approval });
      held(context);
    },
  });
  const dropped: AgentError[] = [];
  let onDropped!: () => void;
  const firstDrop = new Promise<void>((resolve) => (onDropped = resolve));
  const published: ProtocolEvent[] = [];
  const runtime = await perTest.start({
    providers: [provider],
    store,
    onBackgroundError: (error) => {
      dropped.push(error);
      onDropped();
    },
  });
  runtime.observe((event) => void published.push(event));
  const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: perTest.workspace } });
  const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'work' }] });
  await waitForEvent(runtime, sessionId, 'interaction.requested');
  return { runtime, store, control, provider, sessionId, runId, turn: await firstTurn, firstDrop, dropped, published };
}

/** The run's output, its end included, arrives while the store refuses every write. */
function streamIntoFullStore(turn: MockTurnContext, control: { full: boolean }) {
  control.full = true;
  turn.emit({ type: 'run.message_delta', runId: turn.runId, blockId: 'block-1', text: 'Lost answer.' });
  turn.emit({ type: 'run.completed', runId: turn.runId, outcome: 'succeeded' });
}

function runEnds(current: AgentRuntime, runId: string): Promise<ProtocolEvent> {
  return new Promise((resolve) => {
    const stop = current.observe((event) => {
      if (event.type === 'run.completed' && event.runId === runId) {
        stop();
        resolve(event);
      }
    });
  });
}

/** The session's whole log: gap-free from 1, exactly one run.completed per run, and everything published was stored. */
async function consistentLog(current: AgentRuntime, sessionId: string, published: readonly ProtocolEvent[]) {
  const events = await current.readEvents(sessionId, { limit: 1000 });
  expect(events.map((event) => event.seq)).toEqual(events.map((_, index) => index + 1));
  expect(published.filter((event) => event.sessionId === sessionId)).toEqual(events);
  const started = events.filter((event) => event.type === 'run.started').map((event) => event.runId);
  const completed = events.filter((event) => event.type === 'run.completed').map((event) => event.runId);
  expect(completed).toEqual(started);
  return events;
}

describe('output the store cannot take', () => {
  it("fails the run store_failure, keeps memory at what is stored, refuses commands until the run's end is stored, then goes on", async () => {
    const {
      runtime: current,
      store,
      control,
      provider,
      sessionId,
      runId,
      turn,
      firstDrop,
      published,
    } = await streamingRun();
    const storedBefore = await current.readEvents(sessionId);
    streamIntoFullStore(turn, control);
    await firstDrop;

    // While not even the run's end can be stored: waiters hear store_failure, memory shows what the store holds.
    const waited = await agentErrorOf(current.waitForRun(runId));
    expect(waited).toMatchObject({ code: 'store_failure', details: { reason: 'run_end_not_stored' } });
    expect(provider.sessions[0]!.stops).toEqual(['release']);
    const during = await current.getSession(sessionId);
    expect(during).toMatchObject({ state: 'waiting', activeRunId: runId, lastSeq: storedBefore.length });
    expect((await store.getSession(sessionId))!.state).toBe('waiting');
    expect(await current.getRun(runId)).toMatchObject({ status: 'running' });
    const refused = await agentErrorOf(current.submitTurn({ sessionId, input: [{ type: 'text', text: 'again' }] }));
    expect(refused).toMatchObject({
      code: 'store_failure',
      retryable: true,
      details: { reason: 'session_not_stored' },
    });
    expect(await current.getSession(sessionId)).toEqual(during);
    expect(await current.readEvents(sessionId)).toEqual(storedBefore);
    // The agent's late output is not taken either.
    provider.sessions[0]!.emit({ type: 'run.message_delta', runId, blockId: 'block-2', text: 'Later.' });

    // Space is back: the next command first stores the run's end, then runs.
    control.full = false;
    const next = await current.submitTurn({ sessionId, input: [{ type: 'text', text: 'again' }] });
    expect(await current.waitForRun(next.runId)).toMatchObject({ outcome: 'succeeded' });
    expect(await current.waitForRun(runId)).toMatchObject({
      status: 'completed',
      outcome: 'failed',
      error: {
        code: 'store_failure',
        // The store's own words, which name its remedy, not a guess about a data directory.
        message: expect.stringContaining('The store said: database or disk is full'),
        details: { reason: 'output_not_stored' },
      },
    });
    const events = await consistentLog(current, sessionId, published);
    expect(events.slice(storedBefore.length).map((event) => event.type)).toEqual([
      'interaction.cancelled',
      'run.completed',
      'run.started',
      'run.message_delta',
      'run.completed',
    ]);
    expect(JSON.stringify(events)).not.toContain('Lost answer.');
    expect(provider.sessions).toHaveLength(2); // the next turn had a new agent
  });

  it('a store gone altogether (its reads refused too, as a stopped PostgreSQL server): waiting for the run still says store_failure', async () => {
    const { runtime: current, control, runId, turn, firstDrop } = await streamingRun();
    control.readsFail = true;
    streamIntoFullStore(turn, control);
    await firstDrop;
    expect(await agentErrorOf(current.waitForRun(runId))).toMatchObject({
      code: 'store_failure',
      details: { reason: 'run_end_not_stored' },
    });
    control.readsFail = false;
    control.full = false;
  });

  it("stores the run's end by itself once the store takes writes again, without a command", async () => {
    const { runtime: current, control, sessionId, runId, turn, firstDrop, published } = await streamingRun();
    streamIntoFullStore(turn, control);
    await firstDrop;
    expect(await agentErrorOf(current.waitForRun(runId))).toMatchObject({ code: 'store_failure' });
    const ended = runEnds(current, runId);
    control.full = false;
    expect(await ended).toMatchObject({ outcome: 'failed', error: { code: 'store_failure' } });
    expect(await current.getSession(sessionId)).toMatchObject({
      state: 'idle',
      activeRunId: null,
      lastRun: { runId, outcome: 'failed' },
    });
    await consistentLog(current, sessionId, published);
  });

  it('leaves a run whose end could not be stored before a shutdown to the next runtime, which ends it once', async () => {
    const { runtime: current, store, control, sessionId, runId, turn, firstDrop } = await streamingRun();
    streamIntoFullStore(turn, control);
    await firstDrop;
    expect(await agentErrorOf(current.waitForRun(runId))).toMatchObject({ code: 'store_failure' });
    await current.shutdown();
    control.full = false;
    const runtime = await perTest.start({ providers: [createMockProvider()], store });
    expect(await runtime.waitForRun(runId)).toMatchObject({ outcome: 'failed', error: { code: 'runtime_restarted' } });
    const events = await runtime.readEvents(sessionId, { limit: 1000 });
    expect(events.map((event) => event.seq)).toEqual(events.map((_, index) => index + 1));
    expect(events.filter((event) => event.type === 'run.completed')).toHaveLength(1);
  });

  it('ends the run at once when the store takes the small repair right after dropping the batch', async () => {
    const { runtime: current, control, sessionId, runId, turn, dropped, published } = await streamingRun();
    // The batch and its three retries fail; the repair is the next commit.
    control.failNext = 4;
    turn.emit({ type: 'run.message_delta', runId, blockId: 'block-1', text: 'Lost answer.' });
    turn.emit({ type: 'run.completed', runId, outcome: 'succeeded' });
    const run = await current.waitForRun(runId);
    const terminalAfterMs = performance.now() - control.firstFailureAt;
    expect(run).toMatchObject({ outcome: 'failed', error: { code: 'store_failure' } });
    expect(dropped).toHaveLength(1);
    expect(control.failedCommits).toBe(4);
    // The three retries wait 1.22 s in all; the repair adds one commit.
    expect(terminalAfterMs).toBeGreaterThan(1_200);
    expect(terminalAfterMs).toBeLessThan(5_000);
    await consistentLog(current, sessionId, published);
  });
});
