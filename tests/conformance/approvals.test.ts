import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { textReply, toolUseReply } from '@tether/fake-anthropic-api';
import type { ProtocolEvent } from '@tether/protocol';
import type { ClaudeProviderSettings } from '@tether/provider-claude';
import { type AgentRuntime, createAgentRuntime } from '@tether/runtime';
import { agentErrorOf, answerText, runEvents, waitForEvent } from '@tether/testkit';
import { expect, it } from 'vitest';
import {
  describeTransports,
  invokedToken,
  lastToolResult,
  neutralSequence,
  returnedToken,
  runSequence,
  toolRejectedText,
  turnRequests,
} from './conformance-harness.js';

type Requested = Extract<ProtocolEvent, { type: 'interaction.requested' }>;

async function promptFor(
  runtime: AgentRuntime,
  sessionId: string,
  text: string,
): Promise<{ runId: string; requested: Requested }> {
  const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text }] });
  const requested = await waitForEvent(runtime, sessionId, 'interaction.requested', {
    where: (event) => event.runId === runId,
  });
  return { runId, requested };
}

/** The CLI's result text for a command that printed nothing. */
const noOutput = '(Bash completed with no output)';

/** A tool prompt, approved and run: the sequence both transports must produce. */
const approvedTool = (input: Record<string, unknown>) => [
  'run.started',
  invokedToken('Bash', input),
  'interaction.requested:approval:Bash',
  'interaction.settled:approved:host',
  returnedToken('succeeded', 'Bash', noOutput),
  'run.message_delta…',
  'run.usage',
  'run.checkpointed',
  'run.completed:succeeded:end_turn',
];
const deniedTool = (input: Record<string, unknown>, message: string) => [
  'run.started',
  invokedToken('Bash', input),
  'interaction.requested:approval:Bash',
  'interaction.settled:denied:host',
  returnedToken('failed', 'Bash', message),
  'run.message_delta…',
  'run.usage',
  'run.checkpointed',
  'run.completed:succeeded:end_turn',
];

describeTransports('tool approvals', ({ start }) => {
  async function open(provider: ClaudeProviderSettings = {}) {
    const environment = await start();
    const runtime = await environment.runtime({ provider });
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    return { environment, runtime, sessionId };
  }

  it('raises a Bash prompt as an approval and runs the command once approved', async () => {
    const { environment, runtime, sessionId } = await open();
    const approvedInput = { command: 'echo approved > approved.txt', description: 'Write a file' };
    environment.api.enqueue(toolUseReply('Bash', approvedInput), textReply('Written.'));
    const { runId, requested } = await promptFor(runtime, sessionId, 'Write the file.');
    expect(requested.request).toEqual({
      kind: 'approval',
      toolName: 'Bash',
      toolUseId: expect.any(String),
      category: 'command',
      title: 'Bash',
      description: 'Write a file',
      blockedPath: path.join(environment.workspace, 'approved.txt'),
      input: { command: 'echo approved > approved.txt', description: 'Write a file' },
      offerSessionApproval: true,
      // What approving for the session would grant, as the CLI proposes it: a rule wider than the command.
      sessionGrant: { rules: ['Bash(echo approved *)'], directories: [environment.workspace] },
      defaultToNo: false,
    });
    const snapshot = await runtime.getSession(sessionId);
    expect(snapshot.state).toBe('waiting');
    expect(snapshot.pendingInteractions.map((interaction) => interaction.interactionRef)).toEqual([
      requested.interactionRef,
    ]);
    const receipt = await runtime.respondInteraction({
      sessionId,
      interactionRef: requested.interactionRef,
      answer: { decision: 'approve' },
    });
    expect(receipt).toMatchObject({ status: 'settled', interactionRef: requested.interactionRef });
    expect(runSequence(await runEvents(runtime, sessionId, runId), runId)).toEqual(approvedTool(approvedInput));
    expect(readFileSync(path.join(environment.workspace, 'approved.txt'), 'utf8')).toBe('approved\n');
    expect((await runtime.getSession(sessionId)).pendingInteractions).toEqual([]);
  });

  it('denies with a message: the tool result carries it, the model is called again, nothing runs', async () => {
    const { environment, runtime, sessionId } = await open();
    const deniedInput = { command: 'echo nope > denied.txt', description: 'Write' };
    environment.api.enqueue(toolUseReply('Bash', deniedInput), textReply('Understood.'));
    const { runId, requested } = await promptFor(runtime, sessionId, 'Try it.');
    await runtime.respondInteraction({
      sessionId,
      interactionRef: requested.interactionRef,
      answer: { decision: 'deny', message: 'Not in this repository, please.' },
    });
    const events = await runEvents(runtime, sessionId, runId);
    expect(runSequence(events, runId)).toEqual(deniedTool(deniedInput, 'Not in this repository, please.'));
    expect(lastToolResult(environment)).toMatchObject({ isError: true, content: 'Not in this repository, please.' });
    expect(answerText(events)).toBe('Understood.');
    expect(existsSync(path.join(environment.workspace, 'denied.txt'))).toBe(false);
  });

  it("runs the host-edited input instead of the model's", async () => {
    const { environment, runtime, sessionId } = await open();
    const modelInput = { command: 'echo model > edited.txt', description: 'Write' };
    environment.api.enqueue(toolUseReply('Bash', modelInput), textReply('Done.'));
    const { runId, requested } = await promptFor(runtime, sessionId, 'Write.');
    await runtime.respondInteraction({
      sessionId,
      interactionRef: requested.interactionRef,
      answer: { decision: 'approve', updatedInput: { command: 'echo host > edited.txt', description: 'Write' } },
    });
    // The invoked event carries what the model asked for; the host's edit is what ran.
    expect(runSequence(await runEvents(runtime, sessionId, runId), runId)).toEqual(approvedTool(modelInput));
    expect(readFileSync(path.join(environment.workspace, 'edited.txt'), 'utf8')).toBe('host\n');
  });

  it("refuses an empty updatedInput (the CLI would run the model's own input as if edited); the prompt stays open", async () => {
    const { environment, runtime, sessionId } = await open();
    environment.api.enqueue(
      toolUseReply('Bash', { command: 'echo model > empty.txt', description: 'Write' }),
      textReply('No.'),
    );
    const { runId, requested } = await promptFor(runtime, sessionId, 'Write.');
    const refused = await agentErrorOf(
      runtime.respondInteraction({
        sessionId,
        interactionRef: requested.interactionRef,
        answer: { decision: 'approve', updatedInput: {} },
      }),
    );
    expect(refused).toMatchObject({ code: 'invalid_command', details: { reason: 'updated_input_empty' } });
    await runtime.respondInteraction({
      sessionId,
      interactionRef: requested.interactionRef,
      answer: { decision: 'deny' },
    });
    await runtime.waitForRun(runId);
    expect(existsSync(path.join(environment.workspace, 'empty.txt'))).toBe(false);
  });

  it('deny and stop: the run ends interrupted and the next turn works', async () => {
    const { environment, runtime, sessionId } = await open();
    environment.api.enqueue(
      toolUseReply('Bash', { command: 'echo x > stop.txt', description: 'Write' }),
      textReply('Fresh start.'),
    );
    const { runId, requested } = await promptFor(runtime, sessionId, 'Write.');
    await runtime.respondInteraction({
      sessionId,
      interactionRef: requested.interactionRef,
      answer: { decision: 'deny', interrupt: true },
    });
    expect(runSequence(await runEvents(runtime, sessionId, runId), runId)).toEqual([
      'run.started',
      invokedToken('Bash', { command: 'echo x > stop.txt', description: 'Write' }),
      'interaction.requested:approval:Bash',
      'interaction.settled:denied:host',
      returnedToken('failed', 'Bash', toolRejectedText),
      'run.usage',
      'run.checkpointed',
      'run.completed:interrupted',
    ]);
    expect(turnRequests(environment)).toHaveLength(1);
    const next = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Again.' }] });
    expect(answerText(await runEvents(runtime, sessionId, next.runId))).toBe('Fresh start.');
  });

  it('approve for the session: the CLI does not ask again for the same command, and no settings file is written', async () => {
    const { environment, runtime, sessionId } = await open();
    const touch = { command: 'touch session-rule.txt', description: 'Touch' };
    environment.api.enqueue(
      toolUseReply('Bash', touch),
      textReply('First.'),
      toolUseReply('Bash', touch),
      textReply('Second.'),
    );
    const first = await promptFor(runtime, sessionId, 'Touch it.');
    await runtime.respondInteraction({
      sessionId,
      interactionRef: first.requested.interactionRef,
      answer: { decision: 'approve', scope: 'session' },
    });
    await runtime.waitForRun(first.runId);
    const second = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Touch it again.' }] });
    const events = await runEvents(runtime, sessionId, second.runId);
    expect(runSequence(events, second.runId)).toEqual([
      'run.started',
      invokedToken('Bash', touch),
      returnedToken('succeeded', 'Bash', noOutput),
      'run.message_delta…',
      'run.usage',
      'run.checkpointed',
      'run.completed:succeeded:end_turn',
    ]);
    expect(existsSync(path.join(environment.workspace, '.claude', 'settings.local.json'))).toBe(false);
  });

  it('approve for the project (local_settings): the rule is written to .claude/settings.local.json and a new session does not ask', async () => {
    const { environment, runtime, sessionId } = await open();
    const touch = { command: 'touch project-rule.txt', description: 'Touch' };
    environment.api.enqueue(
      toolUseReply('Bash', touch),
      textReply('First.'),
      toolUseReply('Bash', touch),
      textReply('Second.'),
    );
    const first = await promptFor(runtime, sessionId, 'Touch it.');
    expect(first.requested.request).toMatchObject({ offerSessionApproval: true });
    await runtime.respondInteraction({
      sessionId,
      interactionRef: first.requested.interactionRef,
      answer: { decision: 'approve', scope: 'local_settings' },
    });
    expect(await runtime.waitForRun(first.runId)).toMatchObject({ outcome: 'succeeded' });
    const settings = JSON.parse(
      readFileSync(path.join(environment.workspace, '.claude', 'settings.local.json'), 'utf8'),
    ) as { permissions?: { allow?: string[] } };
    expect(
      settings.permissions?.allow?.some((rule) => rule.startsWith('Bash(') && rule.includes('touch project-rule.txt')),
    ).toBe(true);
    // Another session (so another agent process) in the same project reads the rule: no prompt.
    const other = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    const second = await runtime.submitTurn({
      sessionId: other.sessionId,
      input: [{ type: 'text', text: 'Touch it again.' }],
    });
    const events = await runEvents(runtime, other.sessionId, second.runId);
    expect(runSequence(events, second.runId)).toEqual([
      'run.started',
      invokedToken('Bash', touch),
      returnedToken('succeeded', 'Bash', noOutput),
      'run.message_delta…',
      'run.usage',
      'run.checkpointed',
      'run.completed:succeeded:end_turn',
    ]);
  });

  it("a file edit's session approval grants a mode, not a rule: it is said, and saving it in the project is refused", async () => {
    const { environment, runtime, sessionId } = await open();
    const write = { file_path: path.join(environment.workspace, 'granted.txt'), content: 'granted\n' };
    environment.api.enqueue(toolUseReply('Write', write), textReply('Written.'));
    const { runId, requested } = await promptFor(runtime, sessionId, 'Write it.');
    expect(requested.request).toMatchObject({
      offerSessionApproval: true,
      sessionGrant: { rules: [], mode: 'auto_edit' },
    });
    const refused = await agentErrorOf(
      runtime.respondInteraction({
        sessionId,
        interactionRef: requested.interactionRef,
        answer: { decision: 'approve', scope: 'local_settings' },
      }),
    );
    expect(refused).toMatchObject({
      code: 'capability_unsupported',
      details: { reason: 'project_approval_not_offered' },
    });
    expect(refused.message).toContain('auto_edit');
    // Still pending: approved once, it runs.
    await runtime.respondInteraction({
      sessionId,
      interactionRef: requested.interactionRef,
      answer: { decision: 'approve' },
    });
    expect(await runtime.waitForRun(runId)).toMatchObject({ outcome: 'succeeded' });
    expect(readFileSync(write.file_path, 'utf8')).toBe('granted\n');
  });

  it('asks for several tool calls of one reply one at a time, each its own interaction', async () => {
    const { environment, runtime, sessionId } = await open();
    const firstCall = { command: 'echo one > one.txt', description: 'First' };
    const secondCall = { command: 'echo two > two.txt', description: 'Second' };
    environment.api.enqueue(
      {
        kind: 'message',
        content: [
          { type: 'tool_use', name: 'Bash', input: firstCall },
          { type: 'tool_use', name: 'Bash', input: secondCall },
        ],
      },
      textReply('Both handled.'),
    );
    const { runId, requested: first } = await promptFor(runtime, sessionId, 'Two things.');
    expect((await runtime.getSession(sessionId)).pendingInteractions).toHaveLength(1);
    await runtime.respondInteraction({
      sessionId,
      interactionRef: first.interactionRef,
      answer: { decision: 'approve' },
    });
    const second = await waitForEvent(runtime, sessionId, 'interaction.requested', { afterSeq: first.seq });
    expect(second.interactionRef).not.toBe(first.interactionRef);
    expect(second.request).toMatchObject({ input: { command: 'echo two > two.txt' } });
    await runtime.respondInteraction({
      sessionId,
      interactionRef: second.interactionRef,
      answer: { decision: 'deny' },
    });
    const sequence = runSequence(await runEvents(runtime, sessionId, runId), runId);
    // When the CLI announces the second call relative to the first answer's settlement is its own
    // scheduling (seen both ways): each settlement is checked against its own prompt and tool instead.
    expect(sequence.filter((token) => !token.startsWith('interaction.settled'))).toEqual([
      'run.started',
      invokedToken('Bash', firstCall),
      'interaction.requested:approval:Bash',
      invokedToken('Bash', secondCall),
      returnedToken('succeeded', 'Bash', noOutput),
      'interaction.requested:approval:Bash',
      returnedToken('failed', 'Bash', 'The user denied this tool call.'),
      'run.message_delta…',
      'run.usage',
      'run.checkpointed',
      'run.completed:succeeded:end_turn',
    ]);
    const position = (token: string, occurrence: number) =>
      sequence.findIndex(
        (entry, index) =>
          entry === token && sequence.slice(0, index).filter((earlier) => earlier === token).length === occurrence,
      );
    const approved = sequence.indexOf('interaction.settled:approved:host');
    const denied = sequence.indexOf('interaction.settled:denied:host');
    expect(approved).toBeGreaterThan(position('interaction.requested:approval:Bash', 0));
    expect(approved).toBeLessThan(position(returnedToken('succeeded', 'Bash', noOutput), 0));
    expect(denied).toBeGreaterThan(position('interaction.requested:approval:Bash', 1));
    expect(denied).toBeLessThan(position(returnedToken('failed', 'Bash', 'The user denied this tool call.'), 0));
    expect(existsSync(path.join(environment.workspace, 'one.txt'))).toBe(true);
    expect(existsSync(path.join(environment.workspace, 'two.txt'))).toBe(false);
  });

  it('first answer wins: a redelivery returns the same receipt, a different answer is refused, the reference is not echoed', async () => {
    const { environment, runtime, sessionId } = await open();
    environment.api.enqueue(
      toolUseReply('Bash', { command: 'echo once > once.txt', description: 'Write' }),
      textReply('Ok.'),
    );
    const { runId, requested } = await promptFor(runtime, sessionId, 'Write.');
    const command = {
      type: 'respond_interaction',
      commandId: 'answer-1',
      sessionId,
      interactionRef: requested.interactionRef,
      answer: { decision: 'approve' },
    } as const;
    const receipt = await runtime.dispatch(command);
    expect(await runtime.dispatch(command)).toEqual(receipt);
    const conflicting = await agentErrorOf(
      runtime.respondInteraction({ sessionId, interactionRef: requested.interactionRef, answer: { decision: 'deny' } }),
    );
    expect(conflicting.code).toBe('interaction_already_settled');
    await runEvents(runtime, sessionId, runId);
    expect((await runtime.readEvents(sessionId)).filter((event) => event.type === 'interaction.settled')).toHaveLength(
      1,
    );
    const other = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    const crossSession = await agentErrorOf(
      runtime.respondInteraction({
        sessionId: other.sessionId,
        interactionRef: requested.interactionRef,
        answer: { decision: 'approve' },
      }),
    );
    expect(crossSession.code).toBe('unknown_interaction');
    expect(crossSession.message).not.toContain(requested.interactionRef);
  });

  it('refuses an answer of the wrong kind and keeps the interaction pending for a correct one', async () => {
    const { environment, runtime, sessionId } = await open();
    environment.api.enqueue(
      toolUseReply('Bash', { command: 'echo ok > kind.txt', description: 'Write' }),
      textReply('Ok.'),
    );
    const { runId, requested } = await promptFor(runtime, sessionId, 'Write.');
    const wrong = await agentErrorOf(
      runtime.respondInteraction({
        sessionId,
        interactionRef: requested.interactionRef,
        answer: { decision: 'answer', answers: [{ text: 'hm' }] },
      }),
    );
    expect(wrong.code).toBe('capability_unsupported');
    expect((await runtime.getSession(sessionId)).pendingInteractions).toHaveLength(1);
    await runtime.respondInteraction({
      sessionId,
      interactionRef: requested.interactionRef,
      answer: { decision: 'approve' },
    });
    expect((await runtime.waitForRun(runId)).outcome).toBe('succeeded');
  });

  it('cancels a pending prompt when its session is closed, and the reference is then unknown', async () => {
    const { environment, runtime, sessionId } = await open();
    environment.api.enqueue(toolUseReply('Bash', { command: 'echo x > closed.txt', description: 'Write' }));
    const { runId, requested } = await promptFor(runtime, sessionId, 'Write.');
    await runtime.closeSession({ sessionId });
    const events = await runtime.readEvents(sessionId);
    expect(runSequence(events, runId)).toEqual([
      'run.started',
      invokedToken('Bash', { command: 'echo x > closed.txt', description: 'Write' }),
      'interaction.requested:approval:Bash',
      'interaction.cancelled:session_closed',
      // The agent stops without ending the call: its run's end does.
      'run.tool_activity:failed:Bash',
      'run.completed:interrupted:session_closed',
    ]);
    expect(neutralSequence(events).slice(-2)).toEqual(['session.closed', 'session.process_stopped:closed']);
    const late = await agentErrorOf(
      runtime.respondInteraction({
        sessionId,
        interactionRef: requested.interactionRef,
        answer: { decision: 'approve' },
      }),
    );
    expect(late.code).toBe('unknown_interaction');
    expect(existsSync(path.join(environment.workspace, 'closed.txt'))).toBe(false);
  });

  it('keeps tool input out of the log with toolInputDetail none', async () => {
    const { environment, runtime, sessionId } = await open({ toolInputDetail: 'none' });
    environment.api.enqueue(
      toolUseReply('Bash', { command: 'echo secret-token-123 > s.txt', description: 'Write' }),
      textReply('Ok.'),
    );
    const { runId, requested } = await promptFor(runtime, sessionId, 'Write.');
    expect(requested.request).toMatchObject({ kind: 'approval', input: null });
    await runtime.respondInteraction({
      sessionId,
      interactionRef: requested.interactionRef,
      answer: { decision: 'deny' },
    });
    await runEvents(runtime, sessionId, runId);
    expect(JSON.stringify(await runtime.readEvents(sessionId))).not.toContain('secret-token-123');
  });

  it('denies every prompt through the prompt channel, raising nothing, with approvals: deny', async () => {
    const { environment, runtime, sessionId } = await open({ approvals: 'deny' });
    environment.api.enqueue(
      toolUseReply('Bash', { command: 'echo x > policy.txt', description: 'Write' }),
      textReply('Fine.'),
    );
    const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Write.' }] });
    const events = await runEvents(runtime, sessionId, runId);
    expect(runSequence(events, runId)).toEqual([
      'run.started',
      invokedToken('Bash', { command: 'echo x > policy.txt', description: 'Write' }),
      'diagnostic:warning:claude.approvals_denied_by_policy',
      returnedToken(
        'failed',
        'Bash',
        'This tool call was not permitted: the host does not accept tool approvals in this session. Continue without it.',
      ),
      'run.message_delta…',
      'run.usage',
      'run.checkpointed',
      'run.completed:succeeded:end_turn',
    ]);
    expect(lastToolResult(environment)).toMatchObject({ isError: true });
    expect(lastToolResult(environment).content).toContain('not permitted');
  });

  it('denies, never allows, a prompt nobody answered in time (host policy)', async () => {
    const environment = await start();
    const lateInput = { command: 'echo late > late.txt', description: 'Write' };
    const runtime = await createAgentRuntime({ providers: [environment.provider()], interactionTimeoutMs: 300 });
    try {
      const { sessionId } = await runtime.openSession({
        workspace: { kind: 'directory', path: environment.workspace },
      });
      environment.api.enqueue(toolUseReply('Bash', lateInput), textReply('Moving on.'));
      const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Write.' }] });
      const events = await runEvents(runtime, sessionId, runId);
      const denied = deniedTool(
        lateInput,
        'Nobody answered this request in time, so it was not permitted. Continue without it.',
      );
      expect(runSequence(events, runId)).toEqual([
        ...denied.slice(0, 3),
        'interaction.settled:denied:policy',
        ...denied.slice(4),
      ]);
      expect(lastToolResult(environment)).toMatchObject({ isError: true });
      expect(existsSync(path.join(environment.workspace, 'late.txt'))).toBe(false);
    } finally {
      await runtime.shutdown();
    }
  });
});
