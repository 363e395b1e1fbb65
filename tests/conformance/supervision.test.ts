import { holdReply, textReply } from '@tether/fake-anthropic-api';
import { createAgentRuntime } from '@tether/runtime';
import { agentErrorOf, answerText, processesWithEnvironment, runEvents, waitForEvent } from '@tether/testkit';
import { expect, it } from 'vitest';
import { pollFor, readProcessEnvironment } from '@tether/provider-claude/test-support';
import { describeTransports, history, neutralSequence, runSequence } from './conformance-harness.js';

describeTransports('process supervision', ({ start }) => {
  it("records when a session's process starts and stops, with what a restart needs to clean up", async () => {
    const environment = await start();
    environment.api.setResponder(() => textReply('Hi.'));
    const runtime = await environment.runtime();
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    await runtime.waitForRun((await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Hi.' }] })).runId);
    const started = (await runtime.readEvents(sessionId)).find((event) => event.type === 'session.process_started');
    expect(started).toMatchObject({ pid: expect.any(Number), marker: expect.stringMatching(/^[0-9a-f]{32}$/) });
    // The pid is the claude binary itself (the SDK's spawn goes through Tether's supervision too).
    expect(processesWithEnvironment('TETHER_PROCESS_MARKER', (started as { marker: string }).marker)).toEqual([
      (started as { pid: number }).pid,
    ]);
    await runtime.closeSession({ sessionId });
    expect(processesWithEnvironment('HOME', environment.home)).toEqual([]);
    expect(neutralSequence(await runtime.readEvents(sessionId)).slice(-2)).toEqual([
      'session.closed',
      'session.process_stopped:closed',
    ]);
  });

  it('releases an idle process and resumes the conversation in a new one on the next turn', async () => {
    const environment = await start();
    environment.api.enqueue(textReply('Noted: PEAR.'), textReply('It was PEAR.'));
    const runtime = await environment.runtime({ provider: { idleReleaseMs: 200 } });
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    const first = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Remember PEAR.' }] });
    const firstEvents = await runEvents(runtime, sessionId, first.runId);
    const stopped = await waitForEvent(runtime, sessionId, 'session.process_stopped', {
      afterSeq: firstEvents.at(-1)!.seq,
    });
    expect(stopped.reason).toBe('idle');
    const second = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Which fruit?' }] });
    expect(answerText(await runEvents(runtime, sessionId, second.runId))).toBe('It was PEAR.');
    expect(
      (await runtime.readEvents(sessionId)).filter((event) => event.type === 'session.process_started'),
    ).toHaveLength(2);
    expect(history(environment, 1)).toContain('Remember PEAR.');
  });

  it('an ephemeral session whose idle process was released starts its conversation anew, saying so, instead of failing every later turn', async () => {
    const environment = await start();
    environment.api.enqueue(textReply('Noted: PEAR.'), textReply('Which fruit? I was not told.'), textReply('Fine.'));
    const runtime = await environment.runtime({ provider: { idleReleaseMs: 200 } });
    const { sessionId } = await runtime.openSession({
      workspace: { kind: 'directory', path: environment.workspace },
      ephemeral: true,
    });
    const first = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Remember PEAR.' }] });
    const firstEvents = await runEvents(runtime, sessionId, first.runId);
    await waitForEvent(runtime, sessionId, 'session.process_stopped', { afterSeq: firstEvents.at(-1)!.seq });
    // Its agent wrote no transcript to resume (before: resume_not_found on this turn and every later one).
    for (const text of ['Which fruit?', 'And now?']) {
      const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text }] });
      expect(await runtime.waitForRun(runId)).toMatchObject({ outcome: 'succeeded', error: null });
    }
    expect(history(environment, 1)).not.toContain('Remember PEAR.');
    expect((await runtime.readEvents(sessionId)).filter((event) => event.type === 'diagnostic')).toMatchObject([
      { level: 'warning', code: 'claude.conversation_not_kept' },
    ]);
  });

  it("runs at most N processes: a second session's turn waits in the queue, then runs", async () => {
    const environment = await start();
    environment.api.enqueue(holdReply(), textReply('Second session answered.'));
    const runtime = await environment.runtime({ provider: { maxProcesses: 1, idleReleaseMs: 0 } });
    const one = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    const two = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    const held = await runtime.submitTurn({ sessionId: one.sessionId, input: [{ type: 'text', text: 'Hold.' }] });
    await environment.api.waitForRequests(1, { kind: 'turn' });
    const queued = await runtime.submitTurn({ sessionId: two.sessionId, input: [{ type: 'text', text: 'Me next.' }] });
    expect(await waitForEvent(runtime, two.sessionId, 'run.queued')).toMatchObject({
      runId: queued.runId,
      position: 0,
    });
    await runtime.interruptRun({ sessionId: one.sessionId });
    await runtime.waitForRun(held.runId);
    await runtime.closeSession({ sessionId: one.sessionId });
    const events = await runEvents(runtime, two.sessionId, queued.runId);
    expect(answerText(events)).toBe('Second session answered.');
    expect(runSequence(events, queued.runId)).toEqual([
      'run.started',
      'run.queued',
      'run.message_delta…',
      'run.usage',
      'run.checkpointed',
      'run.completed:succeeded:end_turn',
    ]);
  });

  it('frees an idle process for a waiting session instead of queueing behind it; fails fast when the host asks', async () => {
    const environment = await start();
    environment.api.setResponder(() => textReply('Answered.'));
    const runtime = await environment.runtime({ provider: { maxProcesses: 1, idleReleaseMs: 0 } });
    const one = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    const two = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    await runtime.waitForRun(
      (await runtime.submitTurn({ sessionId: one.sessionId, input: [{ type: 'text', text: 'One.' }] })).runId,
    );
    const second = await runtime.submitTurn({ sessionId: two.sessionId, input: [{ type: 'text', text: 'Two.' }] });
    expect(runSequence(await runEvents(runtime, two.sessionId, second.runId), second.runId)).toEqual([
      'run.started',
      'run.message_delta…',
      'run.usage',
      'run.checkpointed',
      'run.completed:succeeded:end_turn',
    ]);
    expect(
      (await runtime.readEvents(one.sessionId)).find((event) => event.type === 'session.process_stopped'),
    ).toMatchObject({ reason: 'idle' });

    environment.api.enqueue(holdReply());
    const failing = await environment.runtime({
      provider: { maxProcesses: 1, whenAtProcessLimit: 'fail', idleReleaseMs: 0 },
    });
    const three = await failing.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    const four = await failing.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    await failing.submitTurn({ sessionId: three.sessionId, input: [{ type: 'text', text: 'Hold.' }] });
    await environment.api.waitForRequests(3, { kind: 'turn' });
    const { runId } = await failing.submitTurn({ sessionId: four.sessionId, input: [{ type: 'text', text: 'Now.' }] });
    expect(await failing.waitForRun(runId)).toMatchObject({ outcome: 'failed', error: { code: 'capacity_exceeded' } });
  });

  it('stops a run that waits on a silent API and fails it provider_stalled; the next turn works', async () => {
    const environment = await start();
    environment.api.enqueue(holdReply(), textReply('Responsive again.'));
    // Long enough that the next turn's own gaps between frames (claude starved of CPU on a loaded 2-core
    // machine: a false stall once failed it at 300 ms) do not count as a stall.
    const runtime = await environment.runtime({ provider: { stallTimeoutMs: 1_500, stallGraceMs: 2_000 } });
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Hang.' }] });
    expect(await runtime.waitForRun(runId)).toMatchObject({
      outcome: 'failed',
      error: { code: 'provider_stalled', details: { phase: 'api', reason: 'no_frames' } },
    });
    const next = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Again.' }] });
    expect(answerText(await runEvents(runtime, sessionId, next.runId))).toBe('Responsive again.');
  });

  it('a run whose claude is held stopped (SIGSTOP) fails provider_stalled saying so, not blaming the API; the next turn works', async () => {
    const environment = await start();
    environment.api.enqueue(holdReply(), textReply('Responsive again.'));
    // As above: the next turn must not stall falsely on a loaded machine.
    const runtime = await environment.runtime({ provider: { stallTimeoutMs: 1_500, stallGraceMs: 500 } });
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Hang.' }] });
    await environment.api.waitForRequests(1, { kind: 'turn' });
    for (const pid of processesWithEnvironment('HOME', environment.home)) process.kill(pid, 'SIGSTOP');
    const run = await runtime.waitForRun(runId);
    expect(run).toMatchObject({
      outcome: 'failed',
      error: { code: 'provider_stalled', details: { phase: 'api', reason: 'agent_stopped' } },
    });
    expect(run.error?.message).toContain('process was stopped');
    const next = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Again.' }] });
    expect(answerText(await runEvents(runtime, sessionId, next.runId))).toBe('Responsive again.');
  });

  it('warm pool: a new session takes over an initialized spare, and shutdown ends the spares', async () => {
    const environment = await start();
    environment.api.setResponder(() => textReply('From the spare.'));
    const runtime = await createAgentRuntime({ providers: [environment.provider({ warmPool: { spares: 1 } })] });
    try {
      const { sessionId } = await runtime.openSession({
        workspace: { kind: 'directory', path: environment.workspace },
      });
      // A supervised agent carries a marker (the `claude --version` check before the first start does not).
      const spare = await pollFor(() =>
        processesWithEnvironment('HOME', environment.home).find((pid) =>
          readProcessEnvironment(pid)?.some((entry) => entry.startsWith('TETHER_PROCESS_MARKER=')),
        ),
      );
      const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Hi.' }] });
      expect(answerText(await runEvents(runtime, sessionId, runId))).toBe('From the spare.');
      expect(
        (await runtime.readEvents(sessionId)).find((event) => event.type === 'session.process_started'),
      ).toMatchObject({ pid: spare });
      await pollFor(() => (processesWithEnvironment('HOME', environment.home).length >= 2 ? true : undefined));
    } finally {
      await runtime.shutdown();
    }
    expect(processesWithEnvironment('HOME', environment.home)).toEqual([]);
  });

  it('refuses set_permission_mode and controls on a closed session with typed errors', async () => {
    const environment = await start();
    const runtime = await environment.runtime();
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    await runtime.closeSession({ sessionId });
    expect((await agentErrorOf(runtime.setPermissionMode({ sessionId, mode: 'plan' }))).code).toBe('session_closed');
    expect(
      (await agentErrorOf(runtime.dispatch({ type: 'run_control', commandId: 'c1', sessionId, name: 'cost' }))).code,
    ).toBe('session_closed');
  });
});
