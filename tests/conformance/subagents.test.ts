import { holdReply, textReply, toolUseReply } from '@tether/fake-anthropic-api';
import type { ProtocolEvent } from '@tether/protocol';
import type { AgentRuntime } from '@tether/runtime';
import { answerText, runEvents, waitForEvent } from '@tether/testkit';
import { expect, it } from 'vitest';
import {
  describeTransports,
  invokedToken,
  returnedToken,
  runSequence,
  toolRejectedText,
} from './conformance-harness.js';

type ToolActivity = Extract<ProtocolEvent, { type: 'run.tool_activity' }>;

const agentInput = {
  description: 'Write a file',
  prompt: 'SUBAGENT TASK: write sub.txt.',
  subagent_type: 'general-purpose',
  run_in_background: false,
};
const innerInput = { command: 'echo sub > sub.txt', description: 'Write sub.txt' };

/** Each tool call's statuses in order, and the call that started it (its subagent's, if any). */
function toolCalls(events: readonly ProtocolEvent[]): Record<string, { statuses: string[]; parent: string | null }> {
  const calls: Record<string, { statuses: string[]; parent: string | null }> = {};
  for (const event of events) {
    if (event.type !== 'run.tool_activity') continue;
    const key = `${event.toolName}:${event.toolUseId}`;
    const call = calls[key] ?? { statuses: [], parent: event.parentToolUseId ?? null };
    calls[key] = call;
    call.statuses.push(event.status);
  }
  return calls;
}

describeTransports('a foreground subagent (Agent tool) that calls a tool needing approval', ({ start }) => {
  async function open() {
    const environment = await start();
    environment.api.enqueue(toolUseReply('Agent', agentInput));
    environment.api.setResponder((view) => {
      if (view.isSubagent)
        return view.toolResults.length === 0 ? toolUseReply('Bash', innerInput) : textReply('Subagent wrote it.');
      return view.toolResults.length > 0 ? textReply('The subagent is done.') : textReply('Next answer.');
    });
    const runtime = await environment.runtime();
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Use a subagent.' }] });
    const requested = await waitForEvent(runtime, sessionId, 'interaction.requested');
    return { runtime, sessionId, runId, requested };
  }

  function agentCallOf(events: readonly ProtocolEvent[]): ToolActivity {
    return events.find(
      (event): event is ToolActivity => event.type === 'run.tool_activity' && event.toolName === 'Agent',
    )!;
  }

  it("raises the subagent's prompt in the run; approved, its call runs inside the Agent call, whose report ends it", async () => {
    const { runtime, sessionId, runId, requested } = await open();
    await runtime.respondInteraction({
      sessionId,
      interactionRef: requested.interactionRef,
      answer: { decision: 'approve' },
    });
    const events = await runEvents(runtime, sessionId, runId);
    const sequence = runSequence(events, runId);
    expect(sequence.slice(0, 5)).toEqual([
      'run.started',
      invokedToken('Agent', agentInput),
      invokedToken('Bash', innerInput),
      'interaction.requested:approval:Bash',
      'interaction.settled:approved:host',
    ]);
    expect(sequence.slice(5)).toEqual([
      returnedToken('succeeded', 'Bash', '(Bash completed with no output)'),
      // The Agent call's result is the subagent's report (its wording is the CLI's).
      expect.stringMatching(/^run\.tool_activity:succeeded:Agent → .*Subagent wrote it\./),
      'run.message_delta…',
      'run.usage',
      'run.checkpointed',
      'run.completed:succeeded:end_turn',
    ]);
    const agentCall = agentCallOf(events);
    expect(toolCalls(events)).toEqual({
      [`Agent:${agentCall.toolUseId}`]: { statuses: ['invoked', 'succeeded'], parent: null },
      [`Bash:${requested.request.toolUseId}`]: { statuses: ['invoked', 'succeeded'], parent: agentCall.toolUseId },
    });
    expect(answerText(events)).toBe('The subagent is done.');
  });

  it("interrupted while the subagent's prompt is pending: the prompt is withdrawn and every call ends, the subagent's too", async () => {
    const { runtime, sessionId, runId, requested } = await open();
    await runtime.interruptRun({ sessionId });
    const events = await runEvents(runtime, sessionId, runId);
    // Whether a stopped run reports usage is timing (interrupted-run-usage.test.ts asserts it).
    const sequence = runSequence(events, runId).filter((token) => token !== 'run.usage');
    expect(sequence.slice(0, 6)).toEqual([
      'run.started',
      invokedToken('Agent', agentInput),
      invokedToken('Bash', innerInput),
      'interaction.requested:approval:Bash',
      'run.interrupt_requested',
      'interaction.withdrawn',
    ]);
    expect(sequence.slice(6)).toEqual([
      // The subagent's call ends before the call that started it (no output: the agent gave none).
      'run.tool_activity:failed:Bash',
      // The CLI's rejection, corrected (the subagent was running, not refused).
      expect.stringContaining(`run.tool_activity:failed:Agent → ${JSON.stringify(toolRejectedText).slice(0, -1)}`),
      'run.checkpointed',
      'run.completed:interrupted',
    ]);
    const agentCall = agentCallOf(events);
    expect(toolCalls(events)).toEqual({
      [`Agent:${agentCall.toolUseId}`]: { statuses: ['invoked', 'failed'], parent: null },
      [`Bash:${requested.request.toolUseId}`]: { statuses: ['invoked', 'failed'], parent: agentCall.toolUseId },
    });
    await nextTurnAnswers(runtime, sessionId);
  });
});

async function nextTurnAnswers(runtime: AgentRuntime, sessionId: string, text = 'Carry on.'): Promise<void> {
  const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text }] });
  const events = await runEvents(runtime, sessionId, runId);
  expect(events.at(-1)).toMatchObject({ type: 'run.completed', outcome: 'succeeded' });
}

const backgroundInput = { ...agentInput, prompt: 'SUBAGENT TASK: say hello.', run_in_background: true };

describeTransports('a background subagent (Agent tool, run_in_background)', ({ start }) => {
  async function open(report = textReply('The background agent has finished.')) {
    const environment = await start();
    environment.api.setResponder((view) => {
      if (view.isSubagent) return textReply('Hello from the background subagent.');
      // After a stopped report the CLI sends the next prompt in the same user message as the notification.
      if (view.lastUserText.includes('Another question.')) return textReply('Next answer.');
      if (view.lastUserText.includes('<task-notification>')) return report;
      if (view.toolResults.length > 0) return textReply('A background agent is working on it.');
      return view.lastUserText.includes('Use a background subagent.')
        ? toolUseReply('Agent', backgroundInput)
        : textReply('Next answer.');
    });
    const runtime = await environment.runtime();
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    return { environment, runtime, sessionId };
  }

  it("the report the agent answers by itself is a run it began: recorded with its answer and cost, the session's next turn after it, a fork cut after it", async () => {
    const { environment, runtime, sessionId } = await open();
    const { runId } = await runtime.submitTurn({
      sessionId,
      input: [{ type: 'text', text: 'Use a background subagent.' }],
    });
    const own = await waitForEvent(runtime, sessionId, 'run.started', {
      where: (event) => event.startedBy === 'agent',
    });
    expect(own).toMatchObject({ input: [], inputRedacted: false });
    expect(own.runId).not.toBe(runId);
    const first = await runEvents(runtime, sessionId, runId);
    expect(answerText(first)).toBe('A background agent is working on it.');
    const events = await runEvents(runtime, sessionId, own.runId);
    expect(answerText(events)).toBe('The background agent has finished.');
    expect(events.at(-1)).toMatchObject({ type: 'run.completed', outcome: 'succeeded', stopReason: 'end_turn' });
    // Its cost is the session's; a point to cut after its answer, none for files (its input's id is never shown).
    expect(events.some((event) => event.type === 'run.usage' && (event.costUsd ?? 0) > 0)).toBe(true);
    expect(events.find((event) => event.type === 'run.checkpointed')).toMatchObject({
      inputMessageId: null,
      lastMessageId: expect.any(String),
    });
    expect(await runtime.getRun(own.runId)).toMatchObject({ status: 'completed', outcome: 'succeeded' });
    // Nothing of the agent's turn was dropped (the subagent's own frames may come after the first run
    // ended, and belong to no run: its report is what the agent's turn answers).
    const all = await runtime.readEvents(sessionId);
    const dropped = ['claude.result_without_run', 'claude.agent_turn_not_recorded', 'runtime.agent_turn_not_recorded'];
    expect(all.filter((event) => event.type === 'diagnostic' && dropped.includes(event.code))).toEqual([]);
    // A fork made now is cut after the agent's answer: the turn the source takes next is not the fork's.
    const { forkSessionId } = await runtime.forkSession({ sessionId });
    await nextTurnAnswers(runtime, sessionId);
    await nextTurnAnswers(runtime, forkSessionId, 'Prompt of the fork.');
    const forkRequest = environment.api.requests.filter((request) => request.kind === 'turn').at(-1);
    const forkHistory = JSON.stringify((forkRequest?.body as { messages?: unknown } | undefined)?.messages);
    expect(forkHistory).toContain('The background agent has finished.');
    expect(forkHistory).toContain('Prompt of the fork.');
    expect(forkHistory).not.toContain('Carry on.');
  });

  it("while the agent's own run is active it is the session's run: a turn waits behind it (after_turn) or is refused, and a stop ends it", async () => {
    const { runtime, sessionId } = await open(holdReply());
    await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Use a background subagent.' }] });
    const own = await waitForEvent(runtime, sessionId, 'run.started', {
      where: (event) => event.startedBy === 'agent',
    });
    await expect(
      runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Another question.' }] }),
    ).rejects.toMatchObject({ code: 'run_active' });
    const queued = await runtime.submitTurn({
      sessionId,
      input: [{ type: 'text', text: 'Another question.' }],
      delivery: 'after_turn',
    });
    expect(queued).toMatchObject({ queued: true });
    await runtime.interruptRun({ sessionId, runId: own.runId });
    const stopped = await runEvents(runtime, sessionId, own.runId);
    expect(stopped.at(-1)).toMatchObject({ type: 'run.completed', outcome: 'interrupted' });
    const next = await runEvents(runtime, sessionId, queued.runId);
    expect(answerText(next)).toBe('Next answer.');
    expect(next.at(-1)).toMatchObject({ type: 'run.completed', outcome: 'succeeded' });
  });
});
