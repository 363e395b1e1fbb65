import { holdReply, textReply } from '@tether/fake-anthropic-api';
import { createClaudeProvider } from '@tether/provider-claude';
import { createAgentRuntime } from '@tether/runtime';
import { type ClaudeTestEnvironment, agentErrorOf, answerText, createClaudeTestEnvironment, processesWithEnvironment, runEvents, waitForEvent } from '@tether/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { pollUntil } from '../../packages/provider-claude/src/process/poll-until.js';

let environment: ClaudeTestEnvironment;

afterEach(async () => {
  await environment?.cleanup();
});

/** Finds what `probe` finds, polling (bounded): another process's start is not an event Node can wait on. */
async function pollFor<Value>(probe: () => Value | undefined): Promise<Value> {
  let value: Value | undefined;
  const found = await pollUntil(() => (value = probe()) !== undefined, { timeoutMs: 20_000 });
  if (!found || value === undefined) throw new Error('timed out waiting for a process');
  return value;
}

function types(events: { type: string }[]): string[] {
  return events.map((event) => event.type);
}

describe('process supervision through the real claude binary', () => {
  it('records when a session\'s process starts and stops, with what a restart needs to clean up', async () => {
    environment = await createClaudeTestEnvironment();
    environment.api.setResponder(() => textReply('Hi.'));
    const runtime = await environment.runtime();
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    await runtime.waitForRun((await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Hi.' }] })).runId);
    const started = (await runtime.readEvents(sessionId)).find((event) => event.type === 'session.process_started');
    expect(started).toMatchObject({ pid: expect.any(Number), marker: expect.stringMatching(/^[0-9a-f]{32}$/) });
    await runtime.closeSession({ sessionId });
    const events = await runtime.readEvents(sessionId);
    expect(events.find((event) => event.type === 'session.process_stopped')).toMatchObject({ reason: 'closed' });
  });

  it('releases an idle process and resumes the conversation in a new one on the next turn', async () => {
    environment = await createClaudeTestEnvironment();
    environment.api.enqueue(textReply('Noted: PEAR.'), textReply('It was PEAR.'));
    const runtime = await environment.runtime({ provider: { idleReleaseMs: 200 } });
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    const first = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Remember PEAR.' }] });
    const firstEvents = await runEvents(runtime, sessionId, first.runId);
    const stopped = await waitForEvent(runtime, sessionId, 'session.process_stopped', { afterSeq: firstEvents.at(-1)!.seq });
    expect(stopped.reason).toBe('idle');
    const second = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Which fruit?' }] });
    expect(answerText(await runEvents(runtime, sessionId, second.runId))).toBe('It was PEAR.');
    const starts = (await runtime.readEvents(sessionId)).filter((event) => event.type === 'session.process_started');
    expect(starts).toHaveLength(2);
    const turns = environment.api.requests.filter((request) => request.kind === 'turn');
    expect(JSON.stringify((turns[1]!.body as { messages: unknown }).messages)).toContain('Remember PEAR.');
  });

  it('runs at most N processes: a second session\'s turn waits in the queue, then runs', async () => {
    environment = await createClaudeTestEnvironment();
    environment.api.enqueue(holdReply(), textReply('Second session answered.'));
    const runtime = await environment.runtime({ provider: { maxProcesses: 1, idleReleaseMs: 0 } });
    const one = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    const two = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    const held = await runtime.submitTurn({ sessionId: one.sessionId, input: [{ type: 'text', text: 'Hold.' }] });
    await environment.api.waitForRequests(1, { kind: 'turn' });
    const queued = await runtime.submitTurn({ sessionId: two.sessionId, input: [{ type: 'text', text: 'Me next.' }] });
    expect(await waitForEvent(runtime, two.sessionId, 'run.queued')).toMatchObject({ runId: queued.runId, position: 0 });
    // The first run is still busy; stopping it frees the only process slot once its session closes.
    await runtime.interruptRun({ sessionId: one.sessionId });
    await runtime.waitForRun(held.runId);
    await runtime.closeSession({ sessionId: one.sessionId });
    expect(answerText(await runEvents(runtime, two.sessionId, queued.runId))).toBe('Second session answered.');
  });

  it('frees an idle process for a waiting session instead of queueing behind it', async () => {
    environment = await createClaudeTestEnvironment();
    environment.api.setResponder(() => textReply('Answered.'));
    const runtime = await environment.runtime({ provider: { maxProcesses: 1, idleReleaseMs: 0 } });
    const one = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    const two = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    await runtime.waitForRun((await runtime.submitTurn({ sessionId: one.sessionId, input: [{ type: 'text', text: 'One.' }] })).runId);
    const second = await runtime.submitTurn({ sessionId: two.sessionId, input: [{ type: 'text', text: 'Two.' }] });
    const events = await runEvents(runtime, two.sessionId, second.runId);
    expect(types(events)).not.toContain('run.queued');
    expect(events.at(-1)).toMatchObject({ outcome: 'succeeded' });
    expect((await runtime.readEvents(one.sessionId)).find((event) => event.type === 'session.process_stopped')).toMatchObject({ reason: 'idle' });
  });

  it('fails fast at the process limit when the host asks', async () => {
    environment = await createClaudeTestEnvironment();
    environment.api.enqueue(holdReply());
    const runtime = await environment.runtime({ provider: { maxProcesses: 1, whenAtProcessLimit: 'fail', idleReleaseMs: 0 } });
    const one = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    const two = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    await runtime.submitTurn({ sessionId: one.sessionId, input: [{ type: 'text', text: 'Hold.' }] });
    await environment.api.waitForRequests(1, { kind: 'turn' });
    const { runId } = await runtime.submitTurn({ sessionId: two.sessionId, input: [{ type: 'text', text: 'Now.' }] });
    expect(await runtime.waitForRun(runId)).toMatchObject({ outcome: 'failed', error: { code: 'capacity_exceeded' } });
  });

  it('stops a run that waits on a silent API and fails it provider_stalled; the next turn works', async () => {
    environment = await createClaudeTestEnvironment();
    environment.api.enqueue(holdReply(), textReply('Responsive again.'));
    const runtime = await environment.runtime({ provider: { stallTimeoutMs: 300, stallGraceMs: 2_000 } });
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Hang.' }] });
    expect(await runtime.waitForRun(runId)).toMatchObject({ outcome: 'failed', error: { code: 'provider_stalled' } });
    const next = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Again.' }] });
    expect(answerText(await runEvents(runtime, sessionId, next.runId))).toBe('Responsive again.');
  });

  it('warm pool: a new session takes over an initialized spare, and shutdown ends the spares', async () => {
    environment = await createClaudeTestEnvironment();
    environment.api.setResponder(() => textReply('From the spare.'));
    const runtime = await createAgentRuntime({ providers: [environment.provider({ warmPool: { spares: 1 } })] });
    try {
      const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
      // The spare starts in the background when the session opens; wait for its process to appear.
      const spare = await pollFor(() => processesWithEnvironment('HOME', environment.home)[0]);
      const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Hi.' }] });
      expect(answerText(await runEvents(runtime, sessionId, runId))).toBe('From the spare.');
      const started = (await runtime.readEvents(sessionId)).find((event) => event.type === 'session.process_started');
      expect(started).toMatchObject({ pid: spare });
      // Adopting it starts the next spare for the next session.
      await pollFor(() => (processesWithEnvironment('HOME', environment.home).length >= 2 ? true : undefined));
    } finally {
      await runtime.shutdown();
    }
    expect(processesWithEnvironment('HOME', environment.home)).toEqual([]);
  });

  it('fails at once with auth_required when the CLI has no credentials at all', async () => {
    environment = await createClaudeTestEnvironment();
    const { ANTHROPIC_API_KEY: _key, ...withoutKey } = environment.environment;
    const runtime = await createAgentRuntime({ providers: [createClaudeProvider({ claudePath: environment.claudePath, environment: withoutKey })] });
    try {
      const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
      const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Hi.' }] });
      const run = await runtime.waitForRun(runId);
      expect(run).toMatchObject({ outcome: 'failed', error: { code: 'auth_required' } });
      expect(run.error?.message).toContain('ANTHROPIC_API_KEY');
      expect(environment.api.requests).toHaveLength(0);
    } finally {
      await runtime.shutdown();
    }
  });

  it('refuses set_permission_mode, controls and turns on a closed session with typed errors', async () => {
    environment = await createClaudeTestEnvironment();
    const runtime = await environment.runtime();
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    await runtime.closeSession({ sessionId });
    expect((await agentErrorOf(runtime.setPermissionMode({ sessionId, mode: 'plan' }))).code).toBe('session_closed');
    expect((await agentErrorOf(runtime.dispatch({ type: 'run_control', commandId: 'c1', sessionId, name: 'cost' }))).code).toBe('session_closed');
  });
});
