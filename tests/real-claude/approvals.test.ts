import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { textReply, toolUseReply } from '@tether/fake-anthropic-api';
import type { ProtocolEvent } from '@tether/protocol';
import type { ClaudeProviderSettings } from '@tether/provider-claude';
import { type AgentRuntime, createAgentRuntime } from '@tether/runtime';
import { type ClaudeTestEnvironment, agentErrorOf, answerText, createClaudeTestEnvironment, runEvents, waitForEvent } from '@tether/testkit';
import { afterEach, describe, expect, it } from 'vitest';

let environment: ClaudeTestEnvironment;

afterEach(async () => {
  await environment?.cleanup();
});

type Requested = Extract<ProtocolEvent, { type: 'interaction.requested' }>;

async function start(provider: ClaudeProviderSettings = {}) {
  environment = await createClaudeTestEnvironment();
  const runtime = await environment.runtime({ provider });
  const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
  return { runtime, sessionId };
}

async function promptFor(runtime: AgentRuntime, sessionId: string, text: string): Promise<{ runId: string; requested: Requested }> {
  const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text }] });
  const requested = await waitForEvent(runtime, sessionId, 'interaction.requested', { where: (event) => event.runId === runId });
  return { runId, requested };
}

function lastToolResult(): { content: string; isError: boolean } {
  const turns = environment.api.requests.filter((request) => request.kind === 'turn');
  return turns.at(-1)!.view!.toolResults[0]!;
}

describe('tool approvals through the real claude binary', () => {
  it('raises a Bash prompt as an approval and runs the command once approved', async () => {
    const { runtime, sessionId } = await start();
    environment.api.enqueue(toolUseReply('Bash', { command: 'echo approved > approved.txt', description: 'Write a file' }), textReply('Written.'));
    const { runId, requested } = await promptFor(runtime, sessionId, 'Write the file.');
    expect(requested.request).toMatchObject({ kind: 'approval', toolName: 'Bash', category: 'command', input: { command: 'echo approved > approved.txt' }, offerSessionApproval: true, defaultToNo: false });
    const snapshot = await runtime.getSession(sessionId);
    expect(snapshot.state).toBe('waiting');
    expect(snapshot.pendingInteractions.map((interaction) => interaction.interactionRef)).toEqual([requested.interactionRef]);

    const receipt = await runtime.respondInteraction({ sessionId, interactionRef: requested.interactionRef, answer: { decision: 'approve' } });
    expect(receipt).toMatchObject({ status: 'settled', interactionRef: requested.interactionRef });
    const events = await runEvents(runtime, sessionId, runId);
    expect(events.find((event) => event.type === 'interaction.settled')).toMatchObject({ outcome: 'approved', by: 'host', runId });
    expect(events.filter((event) => event.type === 'run.tool_activity').map((event) => (event as { status: string }).status)).toEqual(['invoked', 'succeeded']);
    expect(readFileSync(path.join(environment.workspace, 'approved.txt'), 'utf8')).toBe('approved\n');
    expect((await runtime.getSession(sessionId)).pendingInteractions).toEqual([]);
  });

  it('denies with a message: the tool result carries it, the model is called again, nothing runs', async () => {
    const { runtime, sessionId } = await start();
    environment.api.enqueue(toolUseReply('Bash', { command: 'echo nope > denied.txt', description: 'Write' }), textReply('Understood.'));
    const { runId, requested } = await promptFor(runtime, sessionId, 'Try it.');
    await runtime.respondInteraction({ sessionId, interactionRef: requested.interactionRef, answer: { decision: 'deny', message: 'Not in this repository, please.' } });
    const events = await runEvents(runtime, sessionId, runId);
    expect(lastToolResult()).toMatchObject({ isError: true, content: 'Not in this repository, please.' });
    expect(answerText(events)).toBe('Understood.');
    expect(events.at(-1)).toMatchObject({ type: 'run.completed', outcome: 'succeeded' });
    expect(existsSync(path.join(environment.workspace, 'denied.txt'))).toBe(false);
  });

  it('runs the host-edited input instead of the model\'s', async () => {
    const { runtime, sessionId } = await start();
    environment.api.enqueue(toolUseReply('Bash', { command: 'echo model > edited.txt', description: 'Write' }), textReply('Done.'));
    const { runId, requested } = await promptFor(runtime, sessionId, 'Write.');
    await runtime.respondInteraction({
      sessionId,
      interactionRef: requested.interactionRef,
      answer: { decision: 'approve', updatedInput: { command: 'echo host > edited.txt', description: 'Write' } },
    });
    await runEvents(runtime, sessionId, runId);
    expect(readFileSync(path.join(environment.workspace, 'edited.txt'), 'utf8')).toBe('host\n');
  });

  it('deny and stop: the run ends interrupted and the next turn works', async () => {
    const { runtime, sessionId } = await start();
    environment.api.enqueue(toolUseReply('Bash', { command: 'echo x > stop.txt', description: 'Write' }), textReply('Fresh start.'));
    const { runId, requested } = await promptFor(runtime, sessionId, 'Write.');
    await runtime.respondInteraction({ sessionId, interactionRef: requested.interactionRef, answer: { decision: 'deny', interrupt: true } });
    expect(await runtime.waitForRun(runId)).toMatchObject({ outcome: 'interrupted' });
    expect(environment.api.requests.filter((request) => request.kind === 'turn')).toHaveLength(1);
    const next = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Again.' }] });
    expect(answerText(await runEvents(runtime, sessionId, next.runId))).toBe('Fresh start.');
  });

  it('approve for the session: the CLI does not ask again for the same command, and no settings file is written', async () => {
    const { runtime, sessionId } = await start();
    const touch = { command: 'touch session-rule.txt', description: 'Touch' };
    environment.api.enqueue(toolUseReply('Bash', touch), textReply('First.'), toolUseReply('Bash', touch), textReply('Second.'));
    const first = await promptFor(runtime, sessionId, 'Touch it.');
    await runtime.respondInteraction({ sessionId, interactionRef: first.requested.interactionRef, answer: { decision: 'approve', scope: 'session' } });
    await runtime.waitForRun(first.runId);
    const second = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Touch it again.' }] });
    const events = await runEvents(runtime, sessionId, second.runId);
    expect(events.filter((event) => event.type === 'interaction.requested')).toHaveLength(0);
    expect(events.filter((event) => event.type === 'run.tool_activity').map((event) => (event as { status: string }).status)).toEqual(['invoked', 'succeeded']);
    expect(existsSync(path.join(environment.workspace, '.claude', 'settings.local.json'))).toBe(false);
  });

  it('asks for several tool calls of one reply one at a time, each its own interaction', async () => {
    const { runtime, sessionId } = await start();
    environment.api.enqueue(
      {
        kind: 'message',
        content: [
          { type: 'tool_use', name: 'Bash', input: { command: 'echo one > one.txt', description: 'First' } },
          { type: 'tool_use', name: 'Bash', input: { command: 'echo two > two.txt', description: 'Second' } },
        ],
      },
      textReply('Both handled.'),
    );
    const { runId, requested: first } = await promptFor(runtime, sessionId, 'Two things.');
    expect((await runtime.getSession(sessionId)).pendingInteractions).toHaveLength(1);
    await runtime.respondInteraction({ sessionId, interactionRef: first.interactionRef, answer: { decision: 'approve' } });
    const second = await waitForEvent(runtime, sessionId, 'interaction.requested', { afterSeq: first.seq });
    expect(second.interactionRef).not.toBe(first.interactionRef);
    expect(second.request).toMatchObject({ input: { command: 'echo two > two.txt' } });
    await runtime.respondInteraction({ sessionId, interactionRef: second.interactionRef, answer: { decision: 'deny' } });
    expect((await runtime.waitForRun(runId)).outcome).toBe('succeeded');
    expect(existsSync(path.join(environment.workspace, 'one.txt'))).toBe(true);
    expect(existsSync(path.join(environment.workspace, 'two.txt'))).toBe(false);
  });

  it('first answer wins: a redelivery returns the same receipt, a different answer is refused, the reference is not echoed', async () => {
    const { runtime, sessionId } = await start();
    environment.api.enqueue(toolUseReply('Bash', { command: 'echo once > once.txt', description: 'Write' }), textReply('Ok.'));
    const { runId, requested } = await promptFor(runtime, sessionId, 'Write.');
    const command = { type: 'respond_interaction', commandId: 'answer-1', sessionId, interactionRef: requested.interactionRef, answer: { decision: 'approve' } } as const;
    const receipt = await runtime.dispatch(command);
    expect(await runtime.dispatch(command)).toEqual(receipt);
    const conflicting = await agentErrorOf(runtime.respondInteraction({ sessionId, interactionRef: requested.interactionRef, answer: { decision: 'deny' } }));
    expect(conflicting.code).toBe('interaction_already_settled');
    await runEvents(runtime, sessionId, runId);
    const settled = (await runtime.readEvents(sessionId)).filter((event) => event.type === 'interaction.settled');
    expect(settled).toHaveLength(1);

    const other = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    const crossSession = await agentErrorOf(runtime.respondInteraction({ sessionId: other.sessionId, interactionRef: requested.interactionRef, answer: { decision: 'approve' } }));
    expect(crossSession.code).toBe('unknown_interaction');
    expect(crossSession.message).not.toContain(requested.interactionRef);
  });

  it('refuses an answer of the wrong kind and keeps the interaction pending for a correct one', async () => {
    const { runtime, sessionId } = await start();
    environment.api.enqueue(toolUseReply('Bash', { command: 'echo ok > kind.txt', description: 'Write' }), textReply('Ok.'));
    const { runId, requested } = await promptFor(runtime, sessionId, 'Write.');
    const wrong = await agentErrorOf(runtime.respondInteraction({ sessionId, interactionRef: requested.interactionRef, answer: { decision: 'answer', answers: [{ text: 'hm' }] } }));
    expect(wrong.code).toBe('capability_unsupported');
    expect((await runtime.getSession(sessionId)).pendingInteractions).toHaveLength(1);
    await runtime.respondInteraction({ sessionId, interactionRef: requested.interactionRef, answer: { decision: 'approve' } });
    expect((await runtime.waitForRun(runId)).outcome).toBe('succeeded');
  });

  it('cancels a pending prompt when its session is closed, and the reference is then unknown', async () => {
    const { runtime, sessionId } = await start();
    environment.api.enqueue(toolUseReply('Bash', { command: 'echo x > closed.txt', description: 'Write' }));
    const { runId, requested } = await promptFor(runtime, sessionId, 'Write.');
    await runtime.closeSession({ sessionId });
    const events = await runtime.readEvents(sessionId);
    const types = events.map((event) => event.type).filter((type) => type !== 'session.process_stopped');
    expect(types.slice(-3)).toEqual(['interaction.cancelled', 'run.completed', 'session.closed']);
    expect(events.find((event) => event.type === 'interaction.cancelled')).toMatchObject({ runId, reason: 'session_closed' });
    const late = await agentErrorOf(runtime.respondInteraction({ sessionId, interactionRef: requested.interactionRef, answer: { decision: 'approve' } }));
    expect(late.code).toBe('unknown_interaction');
    expect(existsSync(path.join(environment.workspace, 'closed.txt'))).toBe(false);
  });

  it('keeps tool input out of the log with toolInputDetail none', async () => {
    const { runtime, sessionId } = await start({ toolInputDetail: 'none' });
    environment.api.enqueue(toolUseReply('Bash', { command: 'echo secret-token-123 > s.txt', description: 'Write' }), textReply('Ok.'));
    const { runId, requested } = await promptFor(runtime, sessionId, 'Write.');
    expect(requested.request).toMatchObject({ kind: 'approval', input: null });
    await runtime.respondInteraction({ sessionId, interactionRef: requested.interactionRef, answer: { decision: 'deny' } });
    await runEvents(runtime, sessionId, runId);
    expect(JSON.stringify(await runtime.readEvents(sessionId))).not.toContain('secret-token-123');
  });

  it('denies every prompt without raising an interaction with approvals: deny', async () => {
    const { runtime, sessionId } = await start({ approvals: 'deny' });
    environment.api.enqueue(toolUseReply('Bash', { command: 'echo x > policy.txt', description: 'Write' }), textReply('Fine.'));
    const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Write.' }] });
    const events = await runEvents(runtime, sessionId, runId);
    expect(events.filter((event) => event.type === 'interaction.requested')).toHaveLength(0);
    expect(lastToolResult()).toMatchObject({ isError: true });
    expect(lastToolResult().content).toContain('not permitted');
    expect(events.at(-1)).toMatchObject({ type: 'run.completed', outcome: 'succeeded' });
  });
});

describe('interaction timeouts (host policy)', () => {
  it('denies, never allows, a prompt nobody answered in time', async () => {
    environment = await createClaudeTestEnvironment();
    const runtime = await createAgentRuntime({ providers: [environment.provider()], interactionTimeoutMs: 300 });
    try {
      const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
      environment.api.enqueue(toolUseReply('Bash', { command: 'echo late > late.txt', description: 'Write' }), textReply('Moving on.'));
      const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Write.' }] });
      const events = await runEvents(runtime, sessionId, runId);
      expect(events.find((event) => event.type === 'interaction.settled')).toMatchObject({ outcome: 'denied', by: 'policy' });
      expect(lastToolResult()).toMatchObject({ isError: true });
      expect(existsSync(path.join(environment.workspace, 'late.txt'))).toBe(false);
    } finally {
      await runtime.shutdown();
    }
  });
});
