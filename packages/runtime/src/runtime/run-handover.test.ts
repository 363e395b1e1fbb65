import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { AgentError } from '@tether/protocol';
import { type MockTurnContext, createFakeWorkspaceAcquirer, createMockProvider } from '@tether/testkit';
import { describe, expect, it } from 'vitest';
import { runtimePerTest } from './runtime-per-test.test-helper.js';

const per = runtimePerTest('tether-run-handover-');
const text = (value: string) => [{ type: 'text' as const, text: value }];

/**
 * A worktree session whose next baseline is held: its turn is recorded and not yet handed to the
 * agent. The mock agent knows only the runs it was given, and refuses a steer for any other (as
 * Claude's session does: run_not_active); its turns stay open until the test ends them.
 */
async function sessionWithHeldBaseline() {
  const root = path.join(per.workspace, 'worktrees');
  await mkdir(root);
  const acquirer = createFakeWorkspaceAcquirer({ root });
  const turns: MockTurnContext[] = [];
  const provider = createMockProvider({
    turn: (context) => {
      turns.push(context);
    },
    steer: (request, session) => {
      if (!session.turns.some((turn) => turn.runId === request.runId))
        throw new AgentError({
          code: 'provider_rejected',
          message: 'That run is not the one in progress.',
          details: { reason: 'run_not_active' },
        });
    },
  });
  const runtime = await per.start({ providers: [provider], workspaces: [acquirer] });
  const { sessionId } = await runtime.openSession({
    workspace: { kind: 'git_worktree', repository: per.workspace },
  });
  const releaseBaseline = acquirer.holdNextBaseline();
  const { runId } = await runtime.submitTurn({ sessionId, input: text('write it') });
  return { runtime, provider, turns, sessionId, runId, releaseBaseline };
}

describe('a run recorded before it reaches the agent (its worktree baseline being taken)', () => {
  it('stopped meanwhile, ends interrupted at the handover and never reaches the agent', async () => {
    const { runtime, provider, sessionId, runId, releaseBaseline } = await sessionWithHeldBaseline();
    const stopped = runtime.interruptRun({ sessionId, runId });
    releaseBaseline();
    expect(await stopped).toMatchObject({ runId });
    expect(await runtime.waitForRun(runId)).toMatchObject({ outcome: 'interrupted' });
    expect(provider.sessions.flatMap((session) => session.turns)).toEqual([]);
    const types = (await runtime.readEvents(sessionId)).map((event) => event.type);
    expect(types.indexOf('run.interrupt_requested')).toBeLessThan(types.indexOf('run.completed'));
    // The session goes on: the next turn reaches the agent.
    const next = await runtime.submitTurn({ sessionId, input: text('again') });
    await expect
      .poll(() => provider.sessions.flatMap((session) => session.turns.map((turn) => turn.runId)))
      .toEqual([next.runId]);
  });

  it('steered meanwhile, the steer reaches the agent once the run does, not refused', async () => {
    const { runtime, provider, turns, sessionId, runId, releaseBaseline } = await sessionWithHeldBaseline();
    const steered = await runtime.submitTurn({ sessionId, input: text('also the tests'), delivery: 'steer' });
    expect(steered).toMatchObject({ runId, queued: true });
    releaseBaseline();
    await expect.poll(() => provider.sessions[0]?.steers.map((steer) => steer.inputId)).toEqual([steered.inputId]);
    const turn = turns[0]!;
    turn.emit({ type: 'input.folded', runId, inputId: steered.inputId! });
    turn.emit({ type: 'run.completed', runId, outcome: 'succeeded' });
    expect(await runtime.waitForRun(runId)).toMatchObject({ outcome: 'succeeded' });
    const types = (await runtime.readEvents(sessionId)).map((event) => event.type);
    expect(types).toContain('input.folded');
    expect(types).not.toContain('input.cancelled');
  });

  it('steered then withdrawn meanwhile, the steer ends withdrawn and never reaches the agent', async () => {
    const { runtime, provider, turns, sessionId, runId, releaseBaseline } = await sessionWithHeldBaseline();
    const steered = await runtime.submitTurn({ sessionId, input: text('never mind this'), delivery: 'steer' });
    await runtime.cancelQueuedInput({ sessionId, inputId: steered.inputId! });
    const events = await runtime.readEvents(sessionId);
    expect(events.filter((event) => event.type === 'input.cancelled')).toMatchObject([
      { inputId: steered.inputId, reason: 'withdrawn' },
    ]);
    releaseBaseline();
    await expect.poll(() => turns.length).toBe(1);
    turns[0]!.emit({ type: 'run.completed', runId, outcome: 'succeeded' });
    expect(await runtime.waitForRun(runId)).toMatchObject({ outcome: 'succeeded' });
    expect(provider.sessions[0]!.steers).toEqual([]);
  });

  it('a shutdown begun meanwhile ends it runtime_stopped (not started) at the handover: the agent never gets it', async () => {
    const { runtime, provider, runId, releaseBaseline } = await sessionWithHeldBaseline();
    const ends: unknown[] = [];
    runtime.observe((event) => {
      if (event.type === 'run.completed' && event.runId === runId) ends.push(event);
    });
    const stopping = runtime.shutdown({ graceMs: 60_000 });
    releaseBaseline();
    await stopping;
    expect(ends).toMatchObject([
      { outcome: 'interrupted', error: { code: 'runtime_stopped', details: { reason: 'not_started' } } },
    ]);
    expect(provider.sessions.flatMap((session) => session.turns)).toEqual([]);
  });

  it('a shutdown whose grace ends before the handover ends it as not started either, not as cut off', async () => {
    const { runtime, provider, runId, releaseBaseline } = await sessionWithHeldBaseline();
    const ends: unknown[] = [];
    runtime.observe((event) => {
      if (event.type === 'run.completed' && event.runId === runId) ends.push(event);
    });
    const stopping = runtime.shutdown({ graceMs: 0, force: true });
    // Ended by the shutdown itself, while the baseline is still being taken (a forced stop kills git; here it is let go).
    await expect.poll(() => ends.length).toBe(1);
    releaseBaseline();
    await stopping;
    expect(ends).toMatchObject([
      {
        outcome: 'interrupted',
        error: {
          code: 'runtime_stopped',
          details: { reason: 'not_started' },
          message: expect.stringContaining('workspace'),
        },
      },
    ]);
    expect(provider.sessions.flatMap((session) => session.turns)).toEqual([]);
  });
});
