import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AgentError, type ProtocolEvent } from '@tether/protocol';
import {
  type MockProviderOptions,
  type MockTurnContext,
  agentErrorOf,
  collectUntil,
  createMockProvider,
  waitForEvent,
} from '@tether/testkit';
import { describe, expect, it, vi } from 'vitest';
import { runtimePerTest } from './runtime-per-test.test-helper.js';

const per = runtimePerTest('tether-follow-ups-');

/** Turns the test ends by hand: each one streams a delta and waits. */
function heldTurns() {
  const turns: MockTurnContext[] = [];
  const waiters: ((turn: MockTurnContext) => void)[] = [];
  return {
    script: (context: MockTurnContext) => {
      context.emit({ type: 'run.message_delta', runId: context.runId, blockId: 'b1', text: 'working' });
      const waiter = waiters.shift();
      if (waiter) waiter(context);
      else turns.push(context);
    },
    next: () =>
      new Promise<MockTurnContext>((resolve) => (turns.length > 0 ? resolve(turns.shift()!) : waiters.push(resolve))),
  };
}

const text = (value: string) => [{ type: 'text' as const, text: value }];

async function started(options: MockProviderOptions = {}) {
  const turns = heldTurns();
  const provider = createMockProvider({ turn: turns.script, ...options });
  const runtime = await per.start({ providers: [provider] });
  const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: per.workspace } });
  const first = await runtime.submitTurn({ sessionId, input: text('first') });
  const firstTurn = await turns.next();
  return { runtime, provider, turns, sessionId, first, firstTurn };
}

function complete(turn: MockTurnContext, outcome: 'succeeded' | 'interrupted' = 'succeeded') {
  turn.emit({ type: 'run.completed', runId: turn.runId, outcome });
}

const typesOf = (events: readonly ProtocolEvent[]) => events.map((event) => event.type);

describe('follow-ups queued after the turn', () => {
  it('queues while a run streams (event and snapshot), then start in order as the runs their receipts named', async () => {
    const { runtime, provider, turns, sessionId, firstTurn } = await started();
    const second = await runtime.submitTurn({ sessionId, input: text('second  one'), delivery: 'after_turn' });
    const third = await runtime.submitTurn({ sessionId, input: text('third'), delivery: 'after_turn' });
    expect(second).toMatchObject({
      queued: true,
      inputId: expect.stringMatching(/^inp_/),
      runId: expect.stringMatching(/^run_/),
    });
    expect(third.runId).not.toBe(second.runId);
    const queuedEvent = await waitForEvent(runtime, sessionId, 'input.queued');
    expect(queuedEvent).toMatchObject({
      inputId: second.inputId,
      delivery: 'after_turn',
      runId: second.runId,
      input: text('second  one'),
      inputRedacted: false,
    });
    const snapshot = await runtime.getSession(sessionId);
    expect(snapshot.state).toBe('running');
    expect(snapshot.queuedInputs).toEqual([
      expect.objectContaining({
        inputId: second.inputId,
        delivery: 'after_turn',
        runId: second.runId,
        preview: 'second one',
      }),
      expect.objectContaining({ inputId: third.inputId, runId: third.runId, preview: 'third' }),
    ]);

    complete(firstTurn);
    const secondTurn = await turns.next();
    expect(secondTurn.runId).toBe(second.runId);
    expect(secondTurn.input).toEqual(text('second  one'));
    expect((await runtime.getSession(sessionId)).queuedInputs.map((queued) => queued.inputId)).toEqual([third.inputId]);
    complete(secondTurn);
    const thirdTurn = await turns.next();
    expect(thirdTurn.runId).toBe(third.runId);
    complete(thirdTurn);
    await runtime.waitForRun(third.runId);

    const events = await runtime.readEvents(sessionId);
    const lifecycle = events
      .filter(
        (event) => event.type.startsWith('input.') || event.type === 'run.started' || event.type === 'run.completed',
      )
      .map((event) => `${event.type} ${'runId' in event ? event.runId : ''}`);
    expect(lifecycle).toEqual([
      `run.started ${firstTurn.runId}`,
      `input.queued ${second.runId}`,
      `input.queued ${third.runId}`,
      `run.completed ${firstTurn.runId}`,
      `input.started ${second.runId}`,
      `run.started ${second.runId}`,
      `run.completed ${second.runId}`,
      `input.started ${third.runId}`,
      `run.started ${third.runId}`,
      `run.completed ${third.runId}`,
    ]);
    expect(provider.sessions[0]!.turns.map((turn) => turn.input)).toEqual([
      text('first'),
      text('second  one'),
      text('third'),
    ]);
    expect((await runtime.getSession(sessionId)).queuedInputs).toEqual([]);
  });

  it('starts at once, as before, on an idle session; without a delivery a busy session still refuses', async () => {
    const { runtime, sessionId, firstTurn } = await started();
    const refused = await agentErrorOf(runtime.submitTurn({ sessionId, input: text('plain') }));
    expect(refused.code).toBe('run_active');
    complete(firstTurn);
    await runtime.waitForRun(firstTurn.runId);
    const idle = await runtime.submitTurn({ sessionId, input: text('now'), delivery: 'after_turn' });
    expect(idle.queued).toBeUndefined();
    expect(idle.inputId).toBeUndefined();
    expect((await runtime.getSession(sessionId)).activeRunId).toBe(idle.runId);
  });

  it('records a redacted follow-up without its text, and the agent still gets it', async () => {
    const { runtime, provider, turns, sessionId, firstTurn } = await started();
    const queued = await runtime.submitTurn({
      sessionId,
      input: text('secret follow-up'),
      delivery: 'after_turn',
      redactInput: true,
    });
    expect((await runtime.getSession(sessionId)).queuedInputs[0]).toMatchObject({ preview: null });
    complete(firstTurn);
    complete(await turns.next());
    await runtime.waitForRun(queued.runId);
    expect(JSON.stringify(await runtime.readEvents(sessionId))).not.toContain('secret follow-up');
    expect(provider.sessions[0]!.turns[1]!.input).toEqual(text('secret follow-up'));
  });

  it('withdraws a queued input before it starts: it never reaches the agent; a started one is past withdrawing', async () => {
    const { runtime, provider, turns, sessionId, firstTurn } = await started();
    const withdrawn = await runtime.submitTurn({ sessionId, input: text('never mind'), delivery: 'after_turn' });
    const kept = await runtime.submitTurn({ sessionId, input: text('keep'), delivery: 'after_turn' });
    const receipt = await runtime.cancelQueuedInput({ sessionId, inputId: withdrawn.inputId! });
    expect(receipt.inputId).toBe(withdrawn.inputId);
    expect(await waitForEvent(runtime, sessionId, 'input.cancelled')).toMatchObject({
      inputId: withdrawn.inputId,
      runId: withdrawn.runId,
      reason: 'withdrawn',
    });
    expect((await runtime.getSession(sessionId)).queuedInputs.map((queued) => queued.inputId)).toEqual([kept.inputId]);
    const again = await agentErrorOf(runtime.cancelQueuedInput({ sessionId, inputId: withdrawn.inputId! }));
    expect(again.code).toBe('input_not_queued');

    complete(firstTurn);
    const keptTurn = await turns.next();
    expect(keptTurn.runId).toBe(kept.runId);
    const tooLate = await agentErrorOf(runtime.cancelQueuedInput({ sessionId, inputId: kept.inputId! }));
    expect(tooLate.code).toBe('input_not_queued');
    complete(keptTurn);
    await runtime.waitForRun(kept.runId);
    expect(provider.sessions[0]!.turns.map((turn) => turn.input)).toEqual([text('first'), text('keep')]);
    const events = await runtime.readEvents(sessionId);
    expect(events.some((event) => event.type === 'run.started' && event.runId === withdrawn.runId)).toBe(false);
  });

  it("an interrupt's receipt comes once the agent ended the run, or after a bound when it does not", async () => {
    // The agent ends the run a moment after the stop (as the CLI does, ~8 ms later). A timer on the
    // agent's side, not the test's: "the receipt did not come before the run's end" has no event of its
    // own to wait for (ended at once, the old receipt also came after it: checked).
    const late = await started({
      interrupt: (runId, session) => {
        setTimeout(() => session.emit({ type: 'run.completed', runId, outcome: 'interrupted' }), 30);
      },
    });
    await late.runtime.interruptRun({ sessionId: late.sessionId });
    expect(await late.runtime.getRun(late.firstTurn.runId)).toMatchObject({
      status: 'completed',
      outcome: 'interrupted',
    });
    // An agent that never ends the run still gets the stop's receipt (the run goes on).
    const deaf = await started({ interrupt: () => {} });
    const receipt = await deaf.runtime.interruptRun({ sessionId: deaf.sessionId });
    expect(receipt.runId).toBe(deaf.firstTurn.runId);
    expect((await deaf.runtime.getRun(deaf.firstTurn.runId)).status).toBe('running');
    complete(deaf.firstTurn);
  });

  it("a stop's receipt, written once the run has ended, answers its command again and refuses its commandId for another", async () => {
    let reachedAgent!: () => void;
    const asked = new Promise<void>((resolve) => {
      reachedAgent = resolve;
    });
    const { runtime, sessionId, firstTurn } = await started({ interrupt: () => reachedAgent() });
    const stop = { type: 'interrupt_run', commandId: 'stop-1', sessionId } as const;
    // The second, in flight with the first, is told apart by what it asks for: the same command waits with it.
    const dispatched = Promise.allSettled([
      runtime.dispatch(stop),
      runtime.dispatch(stop),
      runtime.dispatch({ ...stop, cancelQueued: true }),
    ]);
    // The stop's receipt waits for the run's end, which the agent gives once asked.
    await asked;
    complete(firstTurn, 'interrupted');
    const [receipt, same, other] = await dispatched;
    expect(receipt).toMatchObject({ status: 'fulfilled', value: { runId: firstTurn.runId } });
    expect(same).toEqual(receipt);
    expect(other).toMatchObject({ status: 'rejected', reason: { details: { reason: 'command_id_reused' } } });
    // Stored, the receipt answers the same command, and still refuses another.
    expect(await runtime.dispatch(stop)).toEqual((receipt as PromiseFulfilledResult<unknown>).value);
    expect((await agentErrorOf(runtime.dispatch({ ...stop, cancelQueued: true }))).details?.reason).toBe(
      'command_id_reused',
    );
  });

  it('an interrupt with cancelQueued cancels the queue; without it the queue runs next', async () => {
    const { runtime, provider, turns, sessionId, firstTurn } = await started({
      interrupt: (runId, session) => session.emit({ type: 'run.completed', runId, outcome: 'interrupted' }),
    });
    const dropped = await runtime.submitTurn({ sessionId, input: text('dropped'), delivery: 'after_turn' });
    await runtime.interruptRun({ sessionId, cancelQueued: true });
    const run = await runtime.waitForRun(firstTurn.runId);
    expect(run.outcome).toBe('interrupted');
    const events = await runtime.readEvents(sessionId);
    expect(events.find((event) => event.type === 'input.cancelled')).toMatchObject({
      inputId: dropped.inputId,
      reason: 'interrupted',
    });
    expect((await runtime.getSession(sessionId)).state).toBe('idle');

    const again = await runtime.submitTurn({ sessionId, input: text('again') });
    const againTurn = await turns.next();
    const next = await runtime.submitTurn({ sessionId, input: text('runs next'), delivery: 'after_turn' });
    await runtime.interruptRun({ sessionId });
    const nextTurn = await turns.next();
    expect(nextTurn.runId).toBe(next.runId);
    expect((await runtime.getRun(again.runId)).outcome).toBe('interrupted');
    expect(againTurn.runId).toBe(again.runId);
    complete(nextTurn);
    await runtime.waitForRun(next.runId);
    expect(provider.sessions[0]!.turns.map((turn) => turn.input)).toEqual([
      text('first'),
      text('again'),
      text('runs next'),
    ]);
  });

  it('close cancels every queued input (session_closed) before the session closes', async () => {
    const { runtime, provider, sessionId, first } = await started();
    const one = await runtime.submitTurn({ sessionId, input: text('one'), delivery: 'after_turn' });
    const two = await runtime.submitTurn({ sessionId, input: text('two'), delivery: 'after_turn' });
    await runtime.closeSession({ sessionId });
    const events = await collectUntil(runtime, sessionId, (event) => event.type === 'session.closed');
    const tail = events.filter(
      (event) => event.type === 'input.cancelled' || event.type.endsWith('.closed') || event.type === 'run.completed',
    );
    expect(tail.map((event) => `${event.type} ${'runId' in event ? event.runId : ''}`)).toEqual([
      `input.cancelled ${one.runId}`,
      `input.cancelled ${two.runId}`,
      `run.completed ${first.runId}`,
      'session.closed ',
    ]);
    expect(
      tail.slice(0, 2).every((event) => event.type === 'input.cancelled' && event.reason === 'session_closed'),
    ).toBe(true);
    expect((await runtime.getSession(sessionId)).queuedInputs).toEqual([]);
    expect(provider.sessions[0]!.turns).toHaveLength(1);
  });

  it('a run that fails (the agent crashed) does not cancel the queue: the next input runs', async () => {
    const { runtime, turns, sessionId, firstTurn } = await started();
    const next = await runtime.submitTurn({ sessionId, input: text('after the crash'), delivery: 'after_turn' });
    firstTurn.emit({
      type: 'run.completed',
      runId: firstTurn.runId,
      outcome: 'failed',
      error: { code: 'provider_crashed', message: 'gone', retryable: true },
    });
    const nextTurn = await turns.next();
    expect(nextTurn.runId).toBe(next.runId);
    complete(nextTurn);
    expect((await runtime.waitForRun(next.runId)).outcome).toBe('succeeded');
  });

  it('concurrent follow-ups from several callers: one run at a time, each input run once, in the order queued', async () => {
    const running = { count: 0, most: 0 };
    const turns = heldTurns();
    const provider = createMockProvider({
      turn: (context) => {
        running.count += 1;
        running.most = Math.max(running.most, running.count);
        turns.script(context);
      },
    });
    const runtime = await per.start({ providers: [provider] });
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: per.workspace } });
    await runtime.submitTurn({ sessionId, input: text('first') });
    const texts = Array.from({ length: 12 }, (_, index) => `follow-up ${index}`);
    const receipts = await Promise.all(
      texts.map((value) => runtime.submitTurn({ sessionId, input: text(value), delivery: 'after_turn' })),
    );
    // Finish each turn as it arrives, while more sends race with the runs' ends.
    const late = ['late 0', 'late 1', 'late 2'];
    const lateReceipts: Promise<{ runId: string }>[] = [];
    for (let index = 0; index < texts.length + late.length + 1; index += 1) {
      const turn = await turns.next();
      if (index < late.length) {
        lateReceipts.push(runtime.submitTurn({ sessionId, input: text(late[index]!), delivery: 'after_turn' }));
      }
      running.count -= 1;
      complete(turn);
    }
    const allReceipts = [...receipts, ...(await Promise.all(lateReceipts))];
    for (const receipt of allReceipts) expect((await runtime.waitForRun(receipt.runId)).outcome).toBe('succeeded');
    expect(running.most).toBe(1);
    expect(provider.sessions).toHaveLength(1);
    const sent = provider.sessions[0]!.turns.map((turn) => (turn.input[0] as { text: string }).text);
    expect(sent.slice(0, texts.length + 1)).toEqual(['first', ...texts]);
    expect([...sent].sort()).toEqual(['first', ...texts, ...late].sort());
    const events = await runtime.readEvents(sessionId);
    const queuedOrder = events.flatMap((event) => (event.type === 'input.queued' ? [event.runId] : []));
    const startOrder = events.flatMap((event) => (event.type === 'input.started' ? [event.runId] : []));
    expect(startOrder).toEqual(queuedOrder);
    expect(new Set(startOrder).size).toBe(texts.length + late.length);
    expect(typesOf(events).filter((type) => type === 'run.started')).toHaveLength(texts.length + late.length + 1);
    let active = 0;
    for (const event of events) {
      if (event.type === 'run.started') active += 1;
      if (event.type === 'run.completed') active -= 1;
      expect(active).toBeLessThanOrEqual(1);
    }
  });
});

describe('follow-ups while the runtime stops', () => {
  const lifecycleOf = (events: readonly ProtocolEvent[]) =>
    events.filter((event) => event.type.startsWith('input.') || event.type.startsWith('run.started'));

  it('once a graceful stop began (beginShutdown) the running run finishes, and no queued follow-up starts or reaches the agent', async () => {
    const { runtime, provider, sessionId, first, firstTurn } = await started();
    const one = await runtime.submitTurn({ sessionId, input: text('one'), delivery: 'after_turn' });
    const two = await runtime.submitTurn({ sessionId, input: text('two'), delivery: 'after_turn' });
    runtime.beginShutdown();
    complete(firstTurn);
    expect((await runtime.waitForRun(first.runId)).outcome).toBe('succeeded');

    // Both stay queued, the session idle behind them, and nothing else happened to them.
    const snapshot = await runtime.getSession(sessionId);
    expect(snapshot.activeRunId).toBeNull();
    expect(snapshot.queuedInputs.map((queued) => queued.inputId)).toEqual([one.inputId, two.inputId]);
    expect(typesOf(lifecycleOf(await runtime.readEvents(sessionId)))).toEqual([
      'run.started',
      'input.queued',
      'input.queued',
    ]);
    expect(provider.sessions[0]!.turns.map((turn) => turn.input)).toEqual([text('first')]);
    // The runtime still takes commands while it drains: a withdrawal ends one, as ever.
    await runtime.cancelQueuedInput({ sessionId, inputId: one.inputId! });
    expect((await runtime.getSession(sessionId)).queuedInputs.map((queued) => queued.inputId)).toEqual([two.inputId]);
    await runtime.shutdown();
    expect(provider.sessions[0]!.turns).toHaveLength(1);
  });

  it('shutdown with a grace stops the run and starts none of its queue (tether run, a host on a signal)', async () => {
    const { runtime, provider, sessionId, first } = await started({
      interrupt: (runId, session) => session.emit({ type: 'run.completed', runId, outcome: 'interrupted' }),
    });
    await runtime.submitTurn({ sessionId, input: text('one'), delivery: 'after_turn' });
    await runtime.submitTurn({ sessionId, input: text('two'), delivery: 'after_turn' });
    const published: ProtocolEvent[] = [];
    runtime.observe((event) => published.push(event));
    await runtime.shutdown({ graceMs: 5_000 });
    expect(provider.sessions[0]!.interrupts).toEqual([first.runId]);
    // Ended by the agent's own stop within the grace; nothing queued started after it.
    expect(published.filter((event) => event.type === 'run.completed')).toMatchObject([
      { runId: first.runId, outcome: 'interrupted' },
    ]);
    expect(lifecycleOf(published)).toEqual([]);
    expect(provider.sessions[0]!.turns.map((turn) => turn.input)).toEqual([text('first')]);
  });
});

describe('follow-ups steered into the running turn', () => {
  it('hands the input to the agent; once folded in the snapshot clears and the run completes once', async () => {
    const { runtime, provider, sessionId, first, firstTurn } = await started({ steer: () => undefined });
    const steered = await runtime.submitTurn({ sessionId, input: text('also check the tests'), delivery: 'steer' });
    expect(steered).toMatchObject({ runId: first.runId, queued: true, inputId: expect.stringMatching(/^inp_/) });
    expect((await runtime.getSession(sessionId)).queuedInputs).toEqual([
      expect.objectContaining({ inputId: steered.inputId, delivery: 'steer', runId: first.runId }),
    ]);
    const session = provider.sessions[0]!;
    await expect.poll(() => session.steers.length).toBe(1);
    expect(session.steers[0]).toEqual({
      runId: first.runId,
      inputId: steered.inputId,
      input: text('also check the tests'),
    });

    session.emit({ type: 'input.folded', runId: first.runId, inputId: steered.inputId! });
    await waitForEvent(runtime, sessionId, 'input.folded');
    expect((await runtime.getSession(sessionId)).queuedInputs).toEqual([]);
    complete(firstTurn);
    await runtime.waitForRun(first.runId);
    const events = await runtime.readEvents(sessionId);
    expect(typesOf(events).filter((type) => type === 'run.completed' || type === 'run.started')).toEqual([
      'run.started',
      'run.completed',
    ]);
    expect(session.turns).toHaveLength(1);
  });

  it('is refused capability_unsupported, changing nothing, when the provider cannot steer', async () => {
    const { runtime, sessionId, firstTurn } = await started();
    const before = await runtime.readEvents(sessionId);
    const refused = await agentErrorOf(runtime.submitTurn({ sessionId, input: text('steer me'), delivery: 'steer' }));
    expect(refused.code).toBe('capability_unsupported');
    expect(refused.details?.reason).toBe('steer');
    expect(await runtime.readEvents(sessionId)).toEqual(before);
    complete(firstTurn);
  });

  it('a steer the agent refuses ends agent_refused with its error; one it never settled ends with the run', async () => {
    const { runtime, sessionId, first, firstTurn } = await started({
      steer: (request) => {
        if ((request.input[0] as { text: string }).text === 'refused')
          throw new AgentError({ code: 'provider_rejected', message: 'not now' });
      },
    });
    const refused = await runtime.submitTurn({ sessionId, input: text('refused'), delivery: 'steer' });
    const cancelled = await waitForEvent(runtime, sessionId, 'input.cancelled');
    expect(cancelled).toMatchObject({
      inputId: refused.inputId,
      reason: 'agent_refused',
      error: { message: 'not now' },
    });

    const pending = await runtime.submitTurn({ sessionId, input: text('pending'), delivery: 'steer' });
    const notWithdrawable = await agentErrorOf(runtime.cancelQueuedInput({ sessionId, inputId: pending.inputId! }));
    expect(notWithdrawable.code).toBe('input_not_queued');
    complete(firstTurn, 'interrupted');
    const ended = await waitForEvent(runtime, sessionId, 'input.cancelled', {
      where: (event) => event.inputId === pending.inputId,
    });
    expect(ended).toMatchObject({ runId: first.runId, reason: 'interrupted' });
    expect((await runtime.getSession(sessionId)).queuedInputs).toEqual([]);
  });

  it('a steer while the host stops the run: refused at submit once the stop is asked (run_stopping); one the stop overtook ends interrupted, not agent_refused', async () => {
    let releaseSteer!: () => void;
    const steerHeld = new Promise<void>((resolve) => (releaseSteer = resolve));
    const { runtime, provider, sessionId, first, firstTurn } = await started({
      // As the CLI answers a steer that reaches it once the stop did: the run is ending.
      steer: async () => {
        await steerHeld;
        throw new AgentError({
          code: 'provider_rejected',
          message: 'The run is ending.',
          details: { reason: 'run_ending' },
        });
      },
      interrupt: () => undefined,
    });
    const overtaken = await runtime.submitTurn({ sessionId, input: text('overtaken'), delivery: 'steer' });
    const stopping = runtime.interruptRun({ sessionId });
    await vi.waitFor(() => expect(provider.sessions[0]!.interrupts).toEqual([first.runId]));
    const before = await runtime.getSession(sessionId);
    const refused = await agentErrorOf(runtime.submitTurn({ sessionId, input: text('late'), delivery: 'steer' }));
    expect(refused).toMatchObject({ code: 'run_active', details: { reason: 'run_stopping' } });
    expect((await runtime.getSession(sessionId)).queuedInputs).toEqual(before.queuedInputs);

    releaseSteer();
    const cancelled = await waitForEvent(runtime, sessionId, 'input.cancelled', {
      where: (event) => event.inputId === overtaken.inputId,
    });
    // Resending an agent_refused steer, as its message says to, would undo the host's stop.
    expect(cancelled).toMatchObject({ runId: first.runId, reason: 'interrupted' });
    expect(cancelled.error).toBeUndefined();
    complete(firstTurn, 'interrupted');
    await stopping;
  });

  it('withdraws a steer the agent has not taken in; one it took is refused input_not_queued', async () => {
    const folded = new Set<string>();
    const { runtime, provider, sessionId, first, firstTurn } = await started({
      steer: () => undefined,
      withdrawSteer: (inputId) => !folded.has(inputId),
    });
    const back = await runtime.submitTurn({ sessionId, input: text('take this back'), delivery: 'steer' });
    const kept = await runtime.submitTurn({ sessionId, input: text('keep this'), delivery: 'steer' });
    const session = provider.sessions[0]!;
    await expect.poll(() => session.steers.length).toBe(2);

    const receipt = await runtime.cancelQueuedInput({ sessionId, inputId: back.inputId! });
    expect(receipt.inputId).toBe(back.inputId);
    const cancelled = (await runtime.readEvents(sessionId)).filter((event) => event.type === 'input.cancelled');
    expect(cancelled).toEqual([
      expect.objectContaining({ inputId: back.inputId, runId: first.runId, reason: 'withdrawn' }),
    ]);

    folded.add(kept.inputId!);
    session.emit({ type: 'input.folded', runId: first.runId, inputId: kept.inputId! });
    const refused = await agentErrorOf(runtime.cancelQueuedInput({ sessionId, inputId: kept.inputId! }));
    expect(refused.code).toBe('input_not_queued');
    complete(firstTurn);
    await runtime.waitForRun(first.runId);
    expect((await runtime.getSession(sessionId)).queuedInputs).toEqual([]);
  });

  it('a steer cannot be withdrawn from a provider that cannot take one back', async () => {
    const { runtime, sessionId, firstTurn } = await started({ steer: () => undefined });
    const steered = await runtime.submitTurn({ sessionId, input: text('too late'), delivery: 'steer' });
    const refused = await agentErrorOf(runtime.cancelQueuedInput({ sessionId, inputId: steered.inputId! }));
    expect(refused).toMatchObject({ code: 'input_not_queued', details: { reason: 'steered' } });
    complete(firstTurn, 'interrupted');
    await runtime.waitForRun(firstTurn.runId);
  });

  it('a provider part naming an input that is not a pending steer of the run never enters the log', async () => {
    const { runtime, provider, sessionId, first, firstTurn } = await started({ steer: () => undefined });
    const queued = await runtime.submitTurn({ sessionId, input: text('after'), delivery: 'after_turn' });
    provider.sessions[0]!.emit({ type: 'input.folded', runId: first.runId, inputId: queued.inputId! });
    complete(firstTurn);
    await runtime.waitForRun(first.runId);
    const events = await runtime.readEvents(sessionId);
    expect(typesOf(events)).not.toContain('input.folded');
    expect(events.find((event) => event.type === 'diagnostic')).toMatchObject({
      code: 'runtime.part_for_unknown_input',
    });
  });
});

describe('a session budget across agent processes', () => {
  it("hands each new agent process what the session's runs cost so far, so a budget holds across restarts", async () => {
    const provider = createMockProvider({
      turn: (context) => {
        context.emit({
          type: 'run.usage',
          runId: context.runId,
          inputTokens: 1,
          outputTokens: 1,
          cacheReadTokens: 0,
          cacheCreationTokens: 0,
          costUsd: 0.25,
        });
        context.emit({ type: 'run.completed', runId: context.runId, outcome: 'succeeded' });
      },
    });
    const runtime = await per.start({ providers: [provider] });
    const { sessionId } = await runtime.openSession({
      workspace: { kind: 'directory', path: per.workspace },
      maxCostUsd: 1,
    });
    await runtime.waitForRun((await runtime.submitTurn({ sessionId, input: text('first') })).runId);
    await runtime.closeSession({ sessionId });
    await runtime.openSession({ continueSession: sessionId });
    await runtime.waitForRun((await runtime.submitTurn({ sessionId, input: text('second') })).runId);
    expect(provider.sessions.map((session) => session.options.spentCostUsd)).toEqual([0, 0.25]);
  });
});

describe('follow-ups that refer to files', () => {
  const withFiles = { capabilities: { inputParts: ['text', 'file'] } };
  const notes = (path: string) => [
    { type: 'text' as const, text: 'Summarise.' },
    { type: 'file' as const, path },
  ];

  it('one whose file is gone when it is about to start is cancelled input_invalid (the submit check, again); the queue goes on', async () => {
    const { runtime, provider, turns, sessionId, firstTurn } = await started(withFiles);
    await writeFile(join(per.workspace, 'notes.txt'), 'notes');
    const broken = await runtime.submitTurn({ sessionId, input: notes('notes.txt'), delivery: 'after_turn' });
    const next = await runtime.submitTurn({ sessionId, input: text('next'), delivery: 'after_turn' });
    await rm(join(per.workspace, 'notes.txt'));
    complete(firstTurn);
    expect((await turns.next()).runId).toBe(next.runId);
    expect(await agentErrorOf(runtime.waitForRun(broken.runId))).toMatchObject({ code: 'run_not_found' });
    const cancelled = await waitForEvent(runtime, sessionId, 'input.cancelled');
    expect(cancelled).toMatchObject({
      inputId: broken.inputId,
      reason: 'input_invalid',
      error: { code: 'invalid_command', details: { reason: 'file_not_found', index: 1 } },
    });
    expect(cancelled.error?.message).toContain(`Input part 2 of 2: ${join(per.workspace, 'notes.txt')} does not exist`);
    expect(provider.sessions[0]!.turns.map((turn) => turn.runId)).not.toContain(broken.runId);
  });

  it('ones whose files are all there start with them, in order, each once its files were looked at', async () => {
    const { runtime, turns, sessionId, firstTurn } = await started(withFiles);
    await writeFile(join(per.workspace, 'notes.txt'), 'notes');
    const second = await runtime.submitTurn({ sessionId, input: notes('notes.txt'), delivery: 'after_turn' });
    const third = await runtime.submitTurn({ sessionId, input: notes('.'), delivery: 'after_turn' });
    complete(firstTurn);
    const secondTurn = await turns.next();
    expect(secondTurn.runId).toBe(second.runId);
    expect(secondTurn.input).toEqual([
      { type: 'text', text: 'Summarise.' },
      { type: 'file', path: join(per.workspace, 'notes.txt'), workspacePath: 'notes.txt' },
    ]);
    complete(secondTurn);
    const thirdTurn = await turns.next();
    expect(thirdTurn.runId).toBe(third.runId);
    complete(thirdTurn);
    expect((await runtime.waitForRun(third.runId)).outcome).toBe('succeeded');
    const events = await runtime.readEvents(sessionId);
    expect(events.filter((event) => event.type.startsWith('input.')).map((event) => event.type)).toEqual([
      'input.queued',
      'input.queued',
      'input.started',
      'input.started',
    ]);
  });
});

describe('follow-ups while the plan limit window is closed', () => {
  // An hour ahead, at 30 seconds past a minute: the message shows seconds only when they are not 0.
  const inAnHour = new Date(Math.ceil(Date.now() / 60_000) * 60_000 + 3_630_000).toISOString();

  function limits(status: 'allowed' | 'rejected', resetsAt: string | null) {
    return {
      type: 'session.limits_changed' as const,
      limits: {
        available: true,
        unavailableReason: null,
        windows: [{ window: 'five_hour', status, usedPercent: status === 'rejected' ? 100 : 10, resetsAt }],
        reportedAt: new Date().toISOString(),
      },
    };
  }

  /** How the provider ends a run the API refused with a 429. */
  function refused(turn: MockTurnContext) {
    turn.emit({
      type: 'run.completed',
      runId: turn.runId,
      outcome: 'failed',
      error: {
        code: 'provider_api_error',
        message: 'The model API answered HTTP 429. The API is rate limiting or overloaded; retry later.',
        retryable: true,
        details: { httpStatus: 429 },
      },
    });
  }

  /** A run whose follow-ups were queued, refused by a window the same run reported closed. */
  async function heldBehindRefusal(resetsAt: string | null = inAnHour) {
    const context = await started();
    const { runtime, sessionId, firstTurn } = context;
    const second = await runtime.submitTurn({ sessionId, input: text('second'), delivery: 'after_turn' });
    const third = await runtime.submitTurn({ sessionId, input: text('third'), delivery: 'after_turn' });
    firstTurn.emit(limits('rejected', resetsAt));
    refused(firstTurn);
    return { ...context, second, third };
  }

  it('holds them (input.held; the snapshot says until when and why), names the reset in the refusal, and starts the oldest once a report reopens the window', async () => {
    const { runtime, provider, turns, sessionId, first, firstTurn, second, third } = await heldBehindRefusal();
    const held = (
      await collectUntil(runtime, sessionId, (event) => event.type === 'input.held' && event.runId === third.runId)
    ).filter((event) => event.type === 'input.held');
    expect(held).toMatchObject([
      { inputId: second.inputId, runId: second.runId, until: inAnHour, reason: 'plan_limit' },
      { inputId: third.inputId, runId: third.runId, until: inAnHour, reason: 'plan_limit' },
    ]);
    const snapshot = await runtime.getSession(sessionId);
    expect(snapshot).toMatchObject({ state: 'idle', activeRunId: null });
    expect(snapshot.queuedInputs.map((queued) => queued.held)).toEqual([
      { until: inAnHour, reason: 'plan_limit' },
      { until: inAnHour, reason: 'plan_limit' },
    ]);
    const run = await runtime.getRun(first.runId);
    expect(run.error).toMatchObject({
      code: 'provider_api_error',
      retryable: true,
      details: { httpStatus: 429, reason: 'plan_limit', resetsAt: inAnHour },
    });
    const readable = `${inAnHour.slice(11, 19)} UTC on`;
    expect(run.error?.message).toContain(`until it resets at ${readable}`);
    expect(run.error?.message).toContain('The 2 follow-ups queued in this session wait for the reset');
    expect(provider.sessions[0]!.turns).toHaveLength(1);

    // The agent reports the window open again (a later rate_limit_event): the oldest starts at once.
    firstTurn.emit(limits('allowed', inAnHour));
    const secondTurn = await turns.next();
    expect(secondTurn.runId).toBe(second.runId);
    // The one behind it waits for that run, as any follow-up: no longer held.
    expect((await runtime.getSession(sessionId)).queuedInputs).toEqual([
      expect.not.objectContaining({ held: expect.anything() }),
    ]);
    complete(secondTurn);
    const thirdTurn = await turns.next();
    expect(thirdTurn.runId).toBe(third.runId);
    complete(thirdTurn);
    expect((await runtime.waitForRun(third.runId)).outcome).toBe('succeeded');
  });

  /** A report of the account as a whole (a window named by no report: unified), with the windows reported before it. */
  function accountReport(before: 'five_hour rejected' | 'none', account: 'allowed' | 'allowed_warning' | 'rejected') {
    const report = limits('rejected', inAnHour);
    const unified = { window: 'unified', status: account, usedPercent: null, resetsAt: null };
    return {
      ...report,
      limits: {
        ...report.limits,
        windows: before === 'none' ? [unified] : [...report.limits.windows, unified],
      },
    };
  }

  it('a report of the whole account as allowed after the window closed (the unified window, listed after it) starts the oldest at once', async () => {
    for (const status of ['allowed', 'allowed_warning'] as const) {
      const { runtime, turns, sessionId, firstTurn, second, third } = await heldBehindRefusal();
      await waitForEvent(runtime, sessionId, 'input.held', { where: (event) => event.runId === third.runId });
      // What the Claude provider reports for a rate_limit_event naming no window: the five-hour
      // window keeps its last report, the account's own comes after it.
      firstTurn.emit(accountReport('five_hour rejected', status));
      const secondTurn = await turns.next();
      expect(secondTurn.runId).toBe(second.runId);
      expect((await runtime.getSession(sessionId)).limits?.windows.map((window) => window.window)).toEqual([
        'five_hour',
        'unified',
      ]);
    }
  });

  it('the account reported allowed before the window closed, or reported rejected after it, releases nothing', async () => {
    const { runtime, sessionId, firstTurn, provider } = await started();
    const second = await runtime.submitTurn({ sessionId, input: text('second'), delivery: 'after_turn' });
    // Allowed first (an earlier answer), then the window's refusal: the refusal is the later word.
    firstTurn.emit(accountReport('none', 'allowed'));
    const closedAfter = limits('rejected', inAnHour);
    firstTurn.emit({
      ...closedAfter,
      limits: {
        ...closedAfter.limits,
        windows: [accountReport('none', 'allowed').limits.windows[0]!, ...closedAfter.limits.windows],
      },
    });
    refused(firstTurn);
    const held = await waitForEvent(runtime, sessionId, 'input.held');
    expect(held).toMatchObject({ runId: second.runId, until: inAnHour });
    firstTurn.emit(accountReport('five_hour rejected', 'rejected'));
    await waitForEvent(runtime, sessionId, 'session.limits_changed', {
      where: (event) => event.limits.windows.at(-1)?.status === 'rejected' && event.limits.windows.length === 2,
      afterSeq: held.seq,
    });
    expect((await runtime.getSession(sessionId)).queuedInputs).toMatchObject([{ held: { until: inAnHour } }]);
    expect(provider.sessions[0]!.turns).toHaveLength(1);
  });

  it('a held follow-up can still be withdrawn, and closing the session cancels the rest; neither reaches the agent', async () => {
    const { runtime, provider, sessionId, second, third } = await heldBehindRefusal();
    await waitForEvent(runtime, sessionId, 'input.held', { where: (event) => event.runId === third.runId });
    await runtime.cancelQueuedInput({ sessionId, inputId: second.inputId! });
    expect((await runtime.getSession(sessionId)).queuedInputs.map((queued) => queued.inputId)).toEqual([third.inputId]);
    await runtime.closeSession({ sessionId });
    const cancelled = (await runtime.readEvents(sessionId)).filter((event) => event.type === 'input.cancelled');
    expect(cancelled).toMatchObject([
      { inputId: second.inputId, reason: 'withdrawn' },
      { inputId: third.inputId, reason: 'session_closed' },
    ]);
    expect(provider.sessions[0]!.turns).toHaveLength(1);
  });

  it("a host's own turn while they are held runs now (the API answers); they keep their place, held again when it is refused too", async () => {
    const { runtime, turns, sessionId, second, third } = await heldBehindRefusal();
    await waitForEvent(runtime, sessionId, 'input.held', { where: (event) => event.runId === third.runId });
    const now = await runtime.submitTurn({ sessionId, input: text('try now') });
    expect(now.queued).toBeUndefined();
    const nowTurn = await turns.next();
    expect(nowTurn.runId).toBe(now.runId);
    // They wait for this run now, as any follow-up: no longer held until its end decides again.
    expect((await runtime.getSession(sessionId)).queuedInputs.map((queued) => queued.held)).toEqual([
      undefined,
      undefined,
    ]);
    const nowStarted = (await runtime.readEvents(sessionId)).find(
      (event) => event.type === 'run.started' && event.runId === now.runId,
    );
    refused(nowTurn);
    const heldAgain = await waitForEvent(runtime, sessionId, 'input.held', {
      where: (event) => event.runId === third.runId,
      afterSeq: nowStarted!.seq,
    });
    expect(heldAgain.until).toBe(inAnHour);
    expect(
      (await runtime.getSession(sessionId)).queuedInputs.map((queued) => [queued.inputId, queued.held?.until]),
    ).toEqual([
      [second.inputId, inAnHour],
      [third.inputId, inAnHour],
    ]);
  });

  it('a rejected window with no reset time, or one already past, holds nothing: the next follow-up starts at once', async () => {
    for (const resetsAt of [null, new Date(Date.now() - 60_000).toISOString()]) {
      const { runtime, turns, second } = await heldBehindRefusal(resetsAt);
      expect((await turns.next()).runId).toBe(second.runId);
      const run = await runtime.getRun(second.runId);
      expect(run.status).toBe('running');
    }
  });
});
