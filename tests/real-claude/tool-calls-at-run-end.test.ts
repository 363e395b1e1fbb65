import { holdReply, textReply, toolUseReply } from '@tether/fake-anthropic-api';
import type { ProtocolEvent } from '@tether/protocol';
import { type ClaudeTestEnvironment, createClaudeTestEnvironment, runEvents, waitForEvent } from '@tether/testkit';
import { afterEach, describe, expect, it } from 'vitest';

let environment: ClaudeTestEnvironment;

afterEach(async () => {
  await environment?.cleanup();
});

/** Each tool call of the run as `toolName:status…`, in order. */
function callLifecycles(events: readonly ProtocolEvent[]): string[] {
  const calls = new Map<string, string[]>();
  for (const event of events) {
    if (event.type !== 'run.tool_activity') continue;
    const statuses = calls.get(event.toolUseId) ?? [event.toolName];
    statuses.push(event.status);
    calls.set(event.toolUseId, statuses);
  }
  return [...calls.values()].map((statuses) => statuses.join(':'));
}

async function openSession() {
  const runtime = await environment.runtime();
  const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
  return { runtime, sessionId };
}

// A run's end leaves no tool call running: a host that draws a spinner per open call would draw it for ever.
describe('tool calls still open when their run ends', () => {
  it('a background subagent goes on past its turn: its call still running when the run ends ends failed with the run', async () => {
    environment = await createClaudeTestEnvironment();
    const { runtime, sessionId } = await openSession();
    let callerMayEnd = false;
    environment.api.setResponder((view) => {
      if (view.isSubagent)
        return view.toolResults.length === 0
          ? toolUseReply('Bash', { command: 'timeout 30 tail -f /dev/null', description: 'Wait' })
          : textReply('Sub done.');
      // The caller's turn is held until the subagent's call runs (the held attempt is dropped and retried).
      if (view.toolResults.length > 0) return callerMayEnd ? textReply('The subagent is working.') : holdReply();
      return toolUseReply('Agent', {
        description: 'Wait a while',
        prompt: 'Wait',
        subagent_type: 'general-purpose',
      });
    });
    const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Start a subagent.' }] });
    const requested = await waitForEvent(runtime, sessionId, 'interaction.requested');
    await runtime.respondInteraction({
      sessionId,
      interactionRef: requested.interactionRef,
      answer: { decision: 'approve' },
    });
    await waitForEvent(runtime, sessionId, 'interaction.settled');
    callerMayEnd = true;
    environment.api.releaseHeld();
    const events = await runEvents(runtime, sessionId, runId);
    expect(events.at(-1)).toMatchObject({ type: 'run.completed', outcome: 'succeeded' });
    expect(callLifecycles(events)).toEqual(['Agent:invoked:succeeded', 'Bash:invoked:failed']);
  });

  it('closing the session while a call waits for approval ends the call failed, after its approval is cancelled', async () => {
    environment = await createClaudeTestEnvironment();
    const { runtime, sessionId } = await openSession();
    environment.api.enqueue(
      toolUseReply('Bash', { command: 'echo hi > hi.txt', description: 'Write' }),
      textReply('Never asked.'),
    );
    const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Write hi.' }] });
    await waitForEvent(runtime, sessionId, 'interaction.requested');
    await runtime.closeSession({ sessionId });
    const events = await runEvents(runtime, sessionId, runId);
    expect(callLifecycles(events)).toEqual(['Bash:invoked:failed']);
    expect(events.slice(-3).map((event) => event.type)).toEqual([
      'interaction.cancelled',
      'run.tool_activity',
      'run.completed',
    ]);
  });
});
