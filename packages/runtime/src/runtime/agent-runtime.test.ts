import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { AgentError, type ProtocolEvent, zeroUsage } from '@tether/protocol';
import { type MockTurnContext, agentErrorOf, collectUntil, createMockProvider } from '@tether/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createInMemoryStore } from '../store/in-memory-store.js';
import { createAgentRuntime } from './agent-runtime.js';

let workspace: string;

beforeEach(async () => {
  workspace = await mkdtemp(path.join(os.tmpdir(), 'tether-runtime-'));
});

afterEach(async () => {
  await rm(workspace, { recursive: true, force: true });
});

/** A turn the test finishes by hand, to hold a run open. */
function heldTurns() {
  const turns: MockTurnContext[] = [];
  const waiters: ((turn: MockTurnContext) => void)[] = [];
  return {
    script: (context: MockTurnContext) => {
      turns.push(context);
      waiters.shift()?.(context);
    },
    next: () =>
      new Promise<MockTurnContext>((resolve) => (turns.length > 0 ? resolve(turns.shift()!) : waiters.push(resolve))),
  };
}

describe('agent runtime with a mock provider', () => {
  it('a wait for a run that had already ended leaves nothing behind when its signal aborts later', async () => {
    const runtime = await createAgentRuntime({ providers: [createMockProvider()] });
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: workspace } });
    const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'hello' }] });
    await runtime.waitForRun(runId);
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const controller = new AbortController();
      expect(await runtime.waitForRun(runId, { signal: controller.signal })).toMatchObject({ status: 'completed' });
      controller.abort(new Error('the caller gave up later'));
      // Node reports a rejection nobody handled once the microtasks ran: after this turn of the loop.
      await new Promise((resolve) => setImmediate(resolve));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
      await runtime.shutdown();
    }
  });

  it('opens a session and answers a turn: receipt first, completion through events', async () => {
    const runtime = await createAgentRuntime({ providers: [createMockProvider()] });
    const opened = await runtime.openSession({ workspace: { kind: 'directory', path: workspace } });
    expect(opened.sessionId).toMatch(/^ses_/);
    const receipt = await runtime.submitTurn({ sessionId: opened.sessionId, input: [{ type: 'text', text: 'hello' }] });
    expect(receipt.runId).toMatch(/^run_/);
    const run = await runtime.waitForRun(receipt.runId);
    expect(run).toMatchObject({ status: 'completed', outcome: 'succeeded', error: null });
    const events = await runtime.readEvents(opened.sessionId);
    expect(events.map((event) => [event.seq, event.type])).toEqual([
      [1, 'session.opened'],
      [2, 'run.started'],
      [3, 'run.message_delta'],
      [4, 'run.completed'],
    ]);
    expect(events[1]).toMatchObject({
      runId: receipt.runId,
      input: [{ type: 'text', text: 'hello' }],
      inputRedacted: false,
    });
    expect((await runtime.getSession(opened.sessionId)).state).toBe('idle');
    await runtime.shutdown();
  });

  it('redacts the turn input when the host asks', async () => {
    const runtime = await createAgentRuntime({ providers: [createMockProvider()] });
    const { sessionId } = await runtime.openSession({
      workspace: { kind: 'directory', path: workspace },
      redactInput: true,
    });
    const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'secret plan' }] });
    await runtime.waitForRun(runId);
    const started = (await runtime.readEvents(sessionId)).find((event) => event.type === 'run.started');
    expect(started).toMatchObject({ input: null, inputRedacted: true });
    expect(JSON.stringify(await runtime.readEvents(sessionId))).not.toContain('secret plan');
    await runtime.shutdown();
  });

  it('returns the original receipt for a repeated commandId and does nothing twice', async () => {
    const provider = createMockProvider();
    const runtime = await createAgentRuntime({ providers: [provider] });
    const command = {
      type: 'open_session',
      commandId: 'open-1',
      workspace: { kind: 'directory', path: workspace },
    } as const;
    const [first, concurrent] = await Promise.all([runtime.dispatch(command), runtime.dispatch(command)]);
    const again = await runtime.dispatch(command);
    expect(concurrent).toEqual(first);
    expect(again).toEqual(first);
    expect(await runtime.listSessions()).toHaveLength(1);

    const turn = {
      type: 'submit_turn',
      commandId: 'turn-1',
      sessionId: first.sessionId,
      input: [{ type: 'text', text: 'hi' }],
    } as const;
    const turnReceipt = await runtime.dispatch(turn);
    await runtime.waitForRun(turnReceipt.runId);
    expect(await runtime.dispatch(turn)).toEqual(turnReceipt);
    expect(provider.sessions[0]!.turns).toHaveLength(1);

    const reused = await agentErrorOf(runtime.dispatch({ ...turn, input: [{ type: 'text', text: 'something else' }] }));
    expect(reused.code).toBe('invalid_command');
    expect(reused.details?.reason).toBe('command_id_reused');
    await runtime.shutdown();
  });

  it('a wait given a signal that is aborted already gives up at once, though the run goes on', async () => {
    const turns = heldTurns();
    const runtime = await createAgentRuntime({ providers: [createMockProvider({ turn: turns.script })] });
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: workspace } });
    const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'one' }] });
    const turn = await turns.next();
    const reason = new Error('the shutdown was forced');
    await expect(runtime.waitForRun(runId, { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    turn.emit({ type: 'run.completed', runId, outcome: 'succeeded' });
    await runtime.waitForRun(runId);
    await runtime.shutdown();
  });

  it('refuses a second turn while a run is active and changes nothing', async () => {
    const turns = heldTurns();
    const runtime = await createAgentRuntime({ providers: [createMockProvider({ turn: turns.script })] });
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: workspace } });
    const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'one' }] });
    const before = await runtime.readEvents(sessionId);
    const error = await agentErrorOf(runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'two' }] }));
    expect(error.code).toBe('run_active');
    expect(await runtime.readEvents(sessionId)).toEqual(before);
    const turn = await turns.next();
    turn.emit({ type: 'run.completed', runId, outcome: 'succeeded' });
    await runtime.waitForRun(runId);
    await runtime.shutdown();
  });

  it('rejects bad input with typed errors and no state change', async () => {
    const runtime = await createAgentRuntime({ providers: [createMockProvider()] });
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: workspace } });
    const before = await runtime.readEvents(sessionId);

    const unknownField = await agentErrorOf(
      runtime.dispatch({
        type: 'submit_turn',
        commandId: 'c1',
        sessionId,
        input: [{ type: 'text', text: 'x' }],
        model: 'x',
      }),
    );
    expect(unknownField.code).toBe('invalid_command');
    // An image without its media type, and a part type Tether does not know.
    const image = await agentErrorOf(
      runtime.dispatch({ type: 'submit_turn', commandId: 'c2', sessionId, input: [{ type: 'image', data: 'AAAA' }] }),
    );
    expect(image.code).toBe('invalid_command');
    const audio = await agentErrorOf(
      runtime.dispatch({ type: 'submit_turn', commandId: 'c3', sessionId, input: [{ type: 'audio', data: 'AAAA' }] }),
    );
    expect(audio.code).toBe('capability_unsupported');
    const missing = await agentErrorOf(
      runtime.openSession({ workspace: { kind: 'directory', path: path.join(workspace, 'nope') } }),
    );
    expect(missing.code).toBe('invalid_workspace');
    const file = path.join(workspace, 'file.txt');
    await writeFile(file, 'x');
    const notDirectory = await agentErrorOf(runtime.openSession({ workspace: { kind: 'directory', path: file } }));
    expect(notDirectory.code).toBe('invalid_workspace');
    const flagLike = await agentErrorOf(
      runtime.openSession({ workspace: { kind: 'directory', path: workspace }, model: '--resume' }),
    );
    expect(flagLike.code).toBe('invalid_command');
    const unknownSession = await agentErrorOf(
      runtime.submitTurn({ sessionId: 'ses_00000000000000000000000000000000', input: [{ type: 'text', text: 'x' }] }),
    );
    expect(unknownSession.code).toBe('session_not_found');

    expect(await runtime.readEvents(sessionId)).toEqual(before);
    expect(await runtime.listSessions()).toHaveLength(1);
    await runtime.shutdown();
  });

  it('answers interrupt_run with capability_unsupported when the provider cannot interrupt', async () => {
    const runtime = await createAgentRuntime({
      providers: [createMockProvider({ capabilities: { interrupt: false } })],
    });
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: workspace } });
    expect((await agentErrorOf(runtime.interruptRun({ sessionId }))).code).toBe('capability_unsupported');
    await runtime.shutdown();
  });

  it('answers get_session_cost with capability_unsupported when the provider has no cost report of its own (sessionCost: false)', async () => {
    const runtime = await createAgentRuntime({
      providers: [createMockProvider({ capabilities: { usage: true, sessionCost: false } })],
    });
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: workspace } });
    expect(
      await agentErrorOf(runtime.dispatch({ type: 'get_session_cost', commandId: 'cost-1', sessionId })),
    ).toMatchObject({ code: 'capability_unsupported', details: { reason: 'session_cost' } });
    expect(
      (await runtime.dispatch({ type: 'get_context_usage', commandId: 'usage-1', sessionId })).usage.totalTokens,
    ).toBe(10);
    await runtime.shutdown();
  });

  it('refuses to reopen a closed session with capability_unsupported when the provider cannot resume, and records nothing', async () => {
    const runtime = await createAgentRuntime({ providers: [createMockProvider({ capabilities: { resume: false } })] });
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: workspace } });
    // An open session is "reopened" as it is: nothing to resume, nothing refused.
    expect(await runtime.openSession({ continueSession: sessionId })).toMatchObject({ sessionId });
    await runtime.closeSession({ sessionId });
    const before = await runtime.readEvents(sessionId);
    expect(await agentErrorOf(runtime.openSession({ continueSession: sessionId }))).toMatchObject({
      code: 'capability_unsupported',
      details: { reason: 'resume' },
    });
    expect(await runtime.readEvents(sessionId)).toEqual(before);
    expect((await runtime.getSession(sessionId)).state).toBe('closed');
    await runtime.shutdown();
  });

  it('closes a session (fencing later turns) and reopens it with the same id and history', async () => {
    const provider = createMockProvider();
    const runtime = await createAgentRuntime({ providers: [provider] });
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: workspace } });
    const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'one' }] });
    await runtime.waitForRun(runId);
    await runtime.closeSession({ sessionId });
    expect((await runtime.getSession(sessionId)).state).toBe('closed');
    expect(provider.sessions[0]!.stops).toEqual(['close']);
    expect((await agentErrorOf(runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'two' }] }))).code).toBe(
      'session_closed',
    );

    const reopened = await runtime.openSession({ continueSession: sessionId });
    expect(reopened.sessionId).toBe(sessionId);
    const second = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'two' }] });
    expect((await runtime.waitForRun(second.runId)).outcome).toBe('succeeded');
    const types = (await runtime.readEvents(sessionId)).map((event) => event.type);
    expect(types).toEqual([
      'session.opened',
      'run.started',
      'run.message_delta',
      'run.completed',
      'session.closed',
      'session.opened',
      'run.started',
      'run.message_delta',
      'run.completed',
    ]);
    await runtime.shutdown();
  });

  it('shares one teardown between concurrent closes, and a failed teardown can be retried', async () => {
    let failures = 1;
    const provider = createMockProvider({
      stop: () => {
        if (failures-- > 0) throw new Error('teardown failed');
      },
    });
    const runtime = await createAgentRuntime({ providers: [provider] });
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: workspace } });
    const [first, second] = await Promise.allSettled([
      runtime.closeSession({ sessionId }),
      runtime.closeSession({ sessionId }),
    ]);
    expect(first.status).toBe('rejected');
    expect(second.status).toBe('rejected');
    expect(provider.sessions[0]!.stops).toEqual(['close']);
    // Fenced at once: no turn gets in while the teardown is retried.
    expect((await agentErrorOf(runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'x' }] }))).code).toBe(
      'session_closed',
    );
    await runtime.closeSession({ sessionId });
    expect(provider.sessions[0]!.stops).toEqual(['close', 'close']);
    await runtime.shutdown();
  });

  it('deletes only closed sessions, with everything stored about them; observers see every published event', async () => {
    const runtime = await createAgentRuntime({ providers: [createMockProvider()] });
    const seen: string[] = [];
    const stop = runtime.observe((event) => seen.push(event.type));
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: workspace } });
    await runtime.waitForRun((await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'hi' }] })).runId);
    expect((await agentErrorOf(runtime.deleteSession(sessionId))).code).toBe('session_open');
    await runtime.closeSession({ sessionId });
    await runtime.deleteSession(sessionId);
    expect((await agentErrorOf(runtime.getSession(sessionId))).code).toBe('session_not_found');
    expect(await runtime.listSessions()).toEqual([]);
    stop();
    expect(seen).toEqual(['session.opened', 'run.started', 'run.message_delta', 'run.completed', 'session.closed']);
    await runtime.shutdown();
  });

  it('completes an active run as interrupted when its session is closed, and ignores late output', async () => {
    const turns = heldTurns();
    const runtime = await createAgentRuntime({ providers: [createMockProvider({ turn: turns.script })] });
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: workspace } });
    const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'one' }] });
    const turn = await turns.next();
    await runtime.closeSession({ sessionId });
    const run = await runtime.waitForRun(runId);
    expect(run).toMatchObject({ outcome: 'interrupted', error: { code: 'session_closed' } });
    turn.emit({ type: 'run.message_delta', runId, blockId: 'b', text: 'late' });
    const events = await runtime.readEvents(sessionId);
    expect(events.filter((event) => event.type === 'run.message_delta')).toHaveLength(0);
    await runtime.shutdown();
  });

  it('fails the run with the provider error when the turn cannot start', async () => {
    const runtime = await createAgentRuntime({
      providers: [
        createMockProvider({
          turn: () => Promise.reject(new AgentError({ code: 'provider_unavailable', message: 'no binary' })),
        }),
      ],
    });
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: workspace } });
    const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'one' }] });
    expect(await runtime.waitForRun(runId)).toMatchObject({
      outcome: 'failed',
      error: { code: 'provider_unavailable' },
    });
    expect((await runtime.getSession(sessionId)).state).toBe('idle');
    await runtime.shutdown();
  });

  it('marks a run left active by a dead runtime as failed with runtime_restarted', async () => {
    const store = createInMemoryStore();
    const turns = heldTurns();
    const first = await createAgentRuntime({ providers: [createMockProvider({ turn: turns.script })], store });
    const { sessionId } = await first.openSession({ workspace: { kind: 'directory', path: workspace } });
    const { runId } = await first.submitTurn({ sessionId, input: [{ type: 'text', text: 'one' }] });
    await turns.next();
    // The first runtime "dies" without shutting down; a second one loads the same store.
    const second = await createAgentRuntime({ providers: [createMockProvider()], store });
    expect(await second.getRun(runId)).toMatchObject({
      status: 'completed',
      outcome: 'failed',
      error: { code: 'runtime_restarted' },
    });
    const snapshot = await second.getSession(sessionId);
    expect(snapshot).toMatchObject({ state: 'idle', activeRunId: null });
    const next = await second.submitTurn({ sessionId, input: [{ type: 'text', text: 'two' }] });
    expect((await second.waitForRun(next.runId)).outcome).toBe('succeeded');
    await second.shutdown();
  });

  it('starts anew, and says so, the conversation of a session whose first turn died with its runtime', async () => {
    const store = createInMemoryStore();
    const turns = heldTurns();
    const first = await createAgentRuntime({ providers: [createMockProvider({ turn: turns.script })], store });
    const { sessionId } = await first.openSession({ workspace: { kind: 'directory', path: workspace } });
    const { runId } = await first.submitTurn({ sessionId, input: [{ type: 'text', text: 'one' }] });
    const turn = await turns.next();
    turn.emit({ type: 'session.provider_session_changed', providerSessionId: 'conversation-1' });
    // Stored (the second runtime reads the store, not the first one's memory).
    await expect.poll(async () => (await store.getSession(sessionId))?.providerSessionId).toBe('conversation-1');
    const second = await createAgentRuntime({ providers: [createMockProvider()], store });
    expect((await second.getSession(sessionId)).providerSessionId).toBeNull();
    expect((await second.readEvents(sessionId)).filter((event) => event.type === 'diagnostic')).toMatchObject([
      { runId, level: 'warning', code: 'session.conversation_not_kept' },
    ]);
    await second.shutdown();
  });

  it('resumes the conversation of a session whose later turn died with its runtime, though no run reported a checkpoint (runs stored before checkpoints)', async () => {
    const store = createInMemoryStore();
    const turns = heldTurns();
    const first = await createAgentRuntime({ providers: [createMockProvider({ turn: turns.script })], store });
    const { sessionId } = await first.openSession({ workspace: { kind: 'directory', path: workspace } });
    const answered = await first.submitTurn({ sessionId, input: [{ type: 'text', text: 'one' }] });
    const turn = await turns.next();
    // As a Tether from before run.checkpointed recorded it: the conversation named, the turn answered, no checkpoint.
    turn.emit({ type: 'session.provider_session_changed', providerSessionId: 'conversation-1' });
    turn.emit({ type: 'run.usage', runId: answered.runId, ...zeroUsage, inputTokens: 12, outputTokens: 5 });
    turn.emit({ type: 'run.completed', runId: answered.runId, outcome: 'succeeded' });
    await first.waitForRun(answered.runId);
    const { runId } = await first.submitTurn({ sessionId, input: [{ type: 'text', text: 'two' }] });
    await turns.next();
    // The first runtime "dies" mid-turn; a second one loads the same store.
    const second = await createAgentRuntime({ providers: [createMockProvider()], store });
    expect(await second.getRun(runId)).toMatchObject({ outcome: 'failed', error: { code: 'runtime_restarted' } });
    // Its conversation had a turn answered before: it is resumed, not dropped.
    expect((await second.getSession(sessionId)).providerSessionId).toBe('conversation-1');
    await second.shutdown();
  });

  it('starts anew the conversation of an ephemeral session whose turn died with its runtime: its agent kept no transcript', async () => {
    const store = createInMemoryStore();
    const turns = heldTurns();
    const first = await createAgentRuntime({ providers: [createMockProvider({ turn: turns.script })], store });
    const { sessionId } = await first.openSession({
      workspace: { kind: 'directory', path: workspace },
      ephemeral: true,
    });
    const answered = await first.submitTurn({ sessionId, input: [{ type: 'text', text: 'one' }] });
    const turn = await turns.next();
    turn.emit({ type: 'session.provider_session_changed', providerSessionId: 'conversation-1' });
    turn.emit({ type: 'run.usage', runId: answered.runId, ...zeroUsage, outputTokens: 5 });
    turn.emit({ type: 'run.completed', runId: answered.runId, outcome: 'succeeded' });
    await first.waitForRun(answered.runId);
    await first.submitTurn({ sessionId, input: [{ type: 'text', text: 'two' }] });
    await turns.next();
    const second = await createAgentRuntime({ providers: [createMockProvider()], store });
    expect((await second.getSession(sessionId)).providerSessionId).toBeNull();
    await second.shutdown();
  });

  it('replays then follows live events with no gap and no duplicate under concurrent appends', async () => {
    const turns = heldTurns();
    const runtime = await createAgentRuntime({ providers: [createMockProvider({ turn: turns.script })] });
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: workspace } });
    const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'stream' }] });
    const turn = await turns.next();
    const total = 2_000;
    const subscribers: Promise<ProtocolEvent[]>[] = [];
    for (let index = 0; index < total; index += 1) {
      // Each its own block, so each stays its own event (deltas of one block waiting together are joined).
      turn.emit({ type: 'run.message_delta', runId, blockId: `b${index}`, text: `${index},` });
      // Subscribers join at different moments, each from a different point in the log.
      if (index % 400 === 0) {
        subscribers.push(
          collectUntil(runtime, sessionId, (event) => event.type === 'run.completed', { afterSeq: index % 3 }),
        );
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
    turn.emit({ type: 'run.completed', runId, outcome: 'succeeded' });
    const results = await Promise.all(subscribers);
    const lastSeq = (await runtime.getSession(sessionId)).lastSeq;
    expect(lastSeq).toBe(total + 3);
    results.forEach((events, index) => {
      const from = ((index * 400) % 3) + 1;
      expect(events.map((event) => event.seq)).toEqual(
        Array.from({ length: lastSeq - from + 1 }, (_, offset) => from + offset),
      );
    });
    await runtime.shutdown();
  });
});
