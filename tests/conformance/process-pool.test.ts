import type { ProtocolEvent } from '@tether/protocol';
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { textReply } from '@tether/fake-anthropic-api';
import { answerText, runEvents, waitForEvent } from '@tether/testkit';
import { expect, it } from 'vitest';
import { describeTransports, runSequence, turnRequests } from './conformance-harness.js';

describeTransports('process pool', ({ start }) => {
  /** One process slot; a turn saying "Hold the slot." streams for ~1.5 s (its process busy, not idle), any other is answered at once. */
  async function oneSlot() {
    const environment = await start();
    environment.api.setResponder((request) =>
      request.lastUserText.includes('Hold the slot.')
        ? textReply('Holding the only process slot for a while.', { chunks: 15, delayMs: 100 })
        : textReply('Answered.'),
    );
    const runtime = await environment.runtime({ provider: { maxProcesses: 1, idleReleaseMs: 15 * 60_000 } });
    return { environment, runtime };
  }

  it('more sessions than processes: an idle process makes room at once, and queued turns start in queue order', async () => {
    const environment = await start();
    environment.api.setResponder(() => textReply('Answered.'));
    // The idle timer is long on purpose: only a holder going idle can free a slot within the test.
    const runtime = await environment.runtime({ provider: { maxProcesses: 2, idleReleaseMs: 15 * 60_000 } });
    const published: ProtocolEvent[] = [];
    runtime.observe((event) => published.push(event));
    const sessions = [];
    for (let index = 0; index < 5; index += 1)
      sessions.push(
        (await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } })).sessionId,
      );

    const runs = await Promise.all(
      sessions.map((sessionId, index) =>
        runtime.submitTurn({ sessionId, input: [{ type: 'text', text: `Turn ${index}.` }] }),
      ),
    );
    const completed = await Promise.all(runs.map((run) => runtime.waitForRun(run.runId)));
    expect(completed.map((run) => run.outcome)).toEqual([
      'succeeded',
      'succeeded',
      'succeeded',
      'succeeded',
      'succeeded',
    ]);

    const queued = published.filter(
      (event): event is Extract<ProtocolEvent, { type: 'run.queued' }> => event.type === 'run.queued',
    );
    expect(queued.map((event) => event.position)).toEqual([0, 1, 2]);
    // Each queued session got its process in the order it joined the queue.
    const queuedSessions = queued.map((event) => event.sessionId);
    const startOrder = published
      .filter((event) => event.type === 'session.process_started')
      .map((event) => event.sessionId);
    expect(startOrder.filter((sessionId) => queuedSessions.includes(sessionId))).toEqual(queuedSessions);
    // The room came from idle processes let go for them, not from the idle timer or a process ending by itself.
    const stopped = published.filter((event) => event.type === 'session.process_stopped');
    expect(stopped.map((event) => event.type === 'session.process_stopped' && event.reason)).toEqual([
      'idle',
      'idle',
      'idle',
    ]);
  });

  it("a turn for a session whose idle process is being let go for another session's waits for it to end, then resumes the conversation in a new process", async () => {
    const environment = await start();
    environment.api.setResponder((request) => {
      if (request.lastUserText.includes('Remember PEAR.')) return textReply('Noted: PEAR.');
      // Streamed for longer than a stopping process is given after its EOF (2 s): a stopping process
      // that took this turn would be cut off in the middle of it (provider_crashed, exit code 143).
      if (request.lastUserText.includes('Which fruit?')) return textReply('It was PEAR.', { chunks: 4, delayMs: 300 });
      return textReply('Answered.');
    });
    // One process: the second session's turn takes the slot of the first session's idle process.
    const runtime = await environment.runtime({ provider: { maxProcesses: 1, idleReleaseMs: 15 * 60_000 } });
    const published: ProtocolEvent[] = [];
    runtime.observe((event) => published.push(event));
    const workspace = { kind: 'directory' as const, path: environment.workspace };
    const one = (await runtime.openSession({ workspace })).sessionId;
    const two = (await runtime.openSession({ workspace })).sessionId;
    const first = await runtime.submitTurn({ sessionId: one, input: [{ type: 'text', text: 'Remember PEAR.' }] });
    expect(await runtime.waitForRun(first.runId)).toMatchObject({ outcome: 'succeeded' });

    // In the same tick, in this order: the second session's turn has the pool start stopping the
    // first session's idle process (the least recently used), and the first session's turn arrives
    // while that stop is under way.
    const [other, again] = await Promise.all([
      runtime.submitTurn({ sessionId: two, input: [{ type: 'text', text: 'Hello.' }] }),
      runtime.submitTurn({ sessionId: one, input: [{ type: 'text', text: 'Which fruit?' }] }),
    ]);
    const againEvents = await runEvents(runtime, one, again.runId);
    const otherEvents = await runEvents(runtime, two, other.runId);

    expect(answerText(otherEvents)).toBe('Answered.');
    expect(runSequence(otherEvents, other.runId)).toEqual([
      'run.started',
      'run.message_delta…',
      'run.usage',
      'run.checkpointed',
      'run.completed:succeeded:end_turn',
    ]);
    // The turn never went to the process being stopped: it waited for the slot (the other session
    // holds it, busy), then a new process resumed the conversation.
    expect(runSequence(againEvents, again.runId)).toEqual([
      'run.started',
      'run.queued',
      'run.message_delta…',
      'run.usage',
      'run.checkpointed',
      'run.completed:succeeded:end_turn',
    ]);
    expect(answerText(againEvents)).toBe('It was PEAR.');
    const oneEvents = await runtime.readEvents(one);
    expect(oneEvents.filter((event) => event.type === 'session.process_started')).toHaveLength(2);
    expect(oneEvents.flatMap((event) => (event.type === 'session.process_stopped' ? [event.reason] : []))).toEqual([
      'idle',
    ]);
    // The turn was taken while the old process was being stopped, and queued only once it had ended.
    const at = (predicate: (event: ProtocolEvent) => boolean) => oneEvents.findIndex(predicate);
    const order = [
      at((event) => event.type === 'run.started' && event.runId === again.runId),
      at((event) => event.type === 'session.process_stopped'),
      at((event) => event.type === 'run.queued'),
      oneEvents.findLastIndex((event) => event.type === 'session.process_started'),
    ];
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect(
      published.filter(
        (event) =>
          (event.type === 'run.completed' && event.outcome !== 'succeeded') ||
          (event.type === 'diagnostic' && event.code === 'claude.stdin_closed'),
      ),
    ).toEqual([]);
    const fruit = turnRequests(environment).find((request) => request.view?.lastUserText.includes('Which fruit?'));
    expect(JSON.stringify((fruit!.body as { messages: unknown }).messages)).toContain('Remember PEAR.');
  });

  it('a turn that waited for a slot, whose file went away meanwhile, fails as submit_turn would refuse it now; the agent never gets it', async () => {
    const { environment, runtime } = await oneSlot();
    const workspace = { kind: 'directory' as const, path: environment.workspace };
    const one = (await runtime.openSession({ workspace })).sessionId;
    const two = (await runtime.openSession({ workspace })).sessionId;
    const holding = await runtime.submitTurn({ sessionId: one, input: [{ type: 'text', text: 'Hold the slot.' }] });
    await waitForEvent(runtime, one, 'run.message_delta');
    await writeFile(path.join(environment.workspace, 'notes.txt'), 'hello\n');
    const waiting = await runtime.submitTurn({
      sessionId: two,
      input: [
        { type: 'text', text: 'Read the notes.' },
        { type: 'file', path: 'notes.txt' },
      ],
    });
    await waitForEvent(runtime, two, 'run.queued');
    await rm(path.join(environment.workspace, 'notes.txt'));
    expect(await runtime.waitForRun(holding.runId)).toMatchObject({ outcome: 'succeeded' });

    const ended = await runtime.waitForRun(waiting.runId);
    expect(ended).toMatchObject({
      outcome: 'failed',
      error: { code: 'invalid_command', details: { reason: 'file_not_found', index: 1 } },
    });
    expect(turnRequests(environment).some((request) => request.view?.lastUserText.includes('Read the notes.'))).toBe(
      false,
    );
    // The session goes on: its next turn runs.
    const next = await runtime.submitTurn({ sessionId: two, input: [{ type: 'text', text: 'Hello.' }] });
    expect(await runtime.waitForRun(next.runId)).toMatchObject({ outcome: 'succeeded' });
  });

  it('a turn interrupted while it waited for a slot leaves the queue: the next waiter is first, and its session never runs a process beyond the limit', async () => {
    const { environment, runtime } = await oneSlot();
    const published: ProtocolEvent[] = [];
    runtime.observe((event) => published.push(event));
    const workspace = { kind: 'directory' as const, path: environment.workspace };
    const [a, b, c] = [
      (await runtime.openSession({ workspace })).sessionId,
      (await runtime.openSession({ workspace })).sessionId,
      (await runtime.openSession({ workspace })).sessionId,
    ];
    const holding = await runtime.submitTurn({ sessionId: a, input: [{ type: 'text', text: 'Hold the slot.' }] });
    await waitForEvent(runtime, a, 'run.message_delta');
    const withdrawn = await runtime.submitTurn({ sessionId: b, input: [{ type: 'text', text: 'Never mind.' }] });
    await waitForEvent(runtime, b, 'run.queued');
    await runtime.interruptRun({ sessionId: b });
    expect(await runtime.waitForRun(withdrawn.runId)).toMatchObject({ outcome: 'interrupted' });
    const waiting = await runtime.submitTurn({ sessionId: c, input: [{ type: 'text', text: 'After A.' }] });
    const queued = await waitForEvent(runtime, c, 'run.queued');
    expect(queued).toMatchObject({ position: 0 });

    await runtime.waitForRun(holding.runId);
    // B asks again the moment A's turn is over, while A's process is being let go for C.
    const again = await runtime.submitTurn({ sessionId: b, input: [{ type: 'text', text: 'Now then.' }] });
    expect(await runtime.waitForRun(waiting.runId)).toMatchObject({ outcome: 'succeeded' });
    expect(await runtime.waitForRun(again.runId)).toMatchObject({ outcome: 'succeeded' });

    let alive = 0;
    let most = 0;
    for (const event of published) {
      if (event.type === 'session.process_started') most = Math.max(most, ++alive);
      if (event.type === 'session.process_stopped') alive -= 1;
    }
    expect(most).toBe(1);
    const starts = published
      .filter((event) => event.type === 'session.process_started')
      .map((event) => event.sessionId);
    expect(starts).toEqual([a, c, b]);
  });

  it('a steer for a turn that waits for a slot can be withdrawn: it never reaches the agent', async () => {
    const { environment, runtime } = await oneSlot();
    const workspace = { kind: 'directory' as const, path: environment.workspace };
    const [a, b] = [
      (await runtime.openSession({ workspace })).sessionId,
      (await runtime.openSession({ workspace })).sessionId,
    ];
    const holding = await runtime.submitTurn({ sessionId: a, input: [{ type: 'text', text: 'Hold the slot.' }] });
    await waitForEvent(runtime, a, 'run.message_delta');
    const waiting = await runtime.submitTurn({ sessionId: b, input: [{ type: 'text', text: 'After A.' }] });
    await waitForEvent(runtime, b, 'run.queued');
    const steered = await runtime.submitTurn({
      sessionId: b,
      input: [{ type: 'text', text: 'Also mention zebra-steer-7.' }],
      delivery: 'steer',
    });
    await runtime.cancelQueuedInput({ sessionId: b, inputId: steered.inputId! });
    const cancelled = await waitForEvent(runtime, b, 'input.cancelled');
    expect(cancelled).toMatchObject({ inputId: steered.inputId, reason: 'withdrawn' });
    await runtime.waitForRun(holding.runId);
    expect(await runtime.waitForRun(waiting.runId)).toMatchObject({ outcome: 'succeeded' });
    expect(JSON.stringify(environment.api.requests.map((request) => request.body))).not.toContain('zebra-steer-7');
  });

  it.each(['context usage', 'an agent started at open'] as const)(
    'a process started for %s, then idle, makes room for a turn waiting for its slot',
    async (start) => {
      const { environment, runtime } = await oneSlot();
      const workspace = { kind: 'directory' as const, path: environment.workspace };
      const [holder, waiter] = [
        (await runtime.openSession({ workspace })).sessionId,
        (await runtime.openSession({ workspace })).sessionId,
      ];
      const holding = await runtime.submitTurn({
        sessionId: holder,
        input: [{ type: 'text', text: 'Hold the slot.' }],
      });
      await waitForEvent(runtime, holder, 'run.message_delta');
      // Waits for the slot, then holds it with an agent no turn uses.
      let asker = '';
      const asked =
        start === 'context usage'
          ? runtime.openSession({ workspace }).then(({ sessionId }) => {
              asker = sessionId;
              return runtime.getContextUsage({ sessionId });
            })
          : runtime.openSession({ workspace, startAgent: true }).then(({ sessionId }) => {
              asker = sessionId;
            });
      await waitForEvent(runtime, holder, 'run.completed');
      const waiting = await runtime.submitTurn({ sessionId: waiter, input: [{ type: 'text', text: 'After both.' }] });
      await asked;
      expect(await runtime.waitForRun(holding.runId)).toMatchObject({ outcome: 'succeeded' });
      expect(await runtime.waitForRun(waiting.runId)).toMatchObject({ outcome: 'succeeded' });
      const stopped = await waitForEvent(runtime, asker, 'session.process_stopped');
      expect(stopped).toMatchObject({ reason: 'idle' });
    },
  );
});
