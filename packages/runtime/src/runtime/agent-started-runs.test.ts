import { createMockProvider, replyWith, runEvents, waitForEvent } from '@tether/testkit';
import { describe, expect, it } from 'vitest';
import { runtimePerTest } from './runtime-per-test.test-helper.js';

const per = runtimePerTest('tether-agent-runs-');

const text = (value: string) => [{ type: 'text' as const, text: value }];

async function started() {
  const provider = createMockProvider({ turn: replyWith('Done.') });
  const runtime = await per.start({ providers: [provider] });
  const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: per.workspace } });
  const first = await runtime.submitTurn({ sessionId, input: text('first') });
  await runEvents(runtime, sessionId, first.runId);
  const session = provider.sessions[0]!;
  return { runtime, session, sessionId };
}

describe('a turn the agent begins by itself', () => {
  it('is recorded as a run of its own with no input: its parts enter the log and its end makes the session idle', async () => {
    const { runtime, session, sessionId } = await started();
    const runId = session.options.agentStartedTurn!();
    expect(runId).toMatch(/^run_/);
    session.emit({ type: 'run.message_delta', runId: runId!, blockId: 'b1', text: 'A task finished.' });
    session.emit({ type: 'run.completed', runId: runId!, outcome: 'succeeded', stopReason: 'end_turn' });
    const events = await runEvents(runtime, sessionId, runId!);
    expect(events.map((event) => event.type)).toEqual(['run.started', 'run.message_delta', 'run.completed']);
    expect(events[0]).toMatchObject({ input: [], inputRedacted: false, startedBy: 'agent' });
    expect(await runtime.getRun(runId!)).toMatchObject({ status: 'completed', outcome: 'succeeded' });
    // The session takes the host's next turn as after any run.
    const next = await runtime.submitTurn({ sessionId, input: text('next') });
    expect((await runEvents(runtime, sessionId, next.runId)).at(-1)).toMatchObject({ outcome: 'succeeded' });
  });

  it('is not recorded while a run is active: the agent is told no, nothing enters the log but a warning', async () => {
    const provider = createMockProvider({ turn: () => undefined });
    const runtime = await per.start({ providers: [provider] });
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: per.workspace } });
    const active = await runtime.submitTurn({ sessionId, input: text('first') });
    await waitForEvent(runtime, sessionId, 'run.started');
    const session = provider.sessions[0]!;
    expect(session.options.agentStartedTurn!()).toBeNull();
    const diagnostic = await waitForEvent(runtime, sessionId, 'diagnostic');
    expect(diagnostic).toMatchObject({ code: 'runtime.agent_turn_not_recorded', level: 'warning' });
    const snapshot = await runtime.getSession(sessionId);
    expect(snapshot.activeRunId).toBe(active.runId);
  });

  it('is not recorded once the session is closed', async () => {
    const { runtime, session, sessionId } = await started();
    await runtime.closeSession({ sessionId });
    expect(session.options.agentStartedTurn!()).toBeNull();
  });
});
