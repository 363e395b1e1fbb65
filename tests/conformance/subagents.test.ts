import { textReply, toolUseReply } from '@tether/fake-anthropic-api';
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

async function nextTurnAnswers(runtime: AgentRuntime, sessionId: string): Promise<void> {
  const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Carry on.' }] });
  const events = await runEvents(runtime, sessionId, runId);
  expect(events.at(-1)).toMatchObject({ type: 'run.completed', outcome: 'succeeded' });
}
