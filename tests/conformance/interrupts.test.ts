import { holdReply, textReply, toolUseReply } from '@tether/fake-anthropic-api';
import { pollUntil, readProcessCommandLine } from '@tether/provider-claude/test-support';
import type { AgentRuntime } from '@tether/runtime';
import {
  type ClaudeTestEnvironment,
  answerText,
  processesWithEnvironment,
  runEvents,
  waitForEvent,
} from '@tether/testkit';
import { expect, it } from 'vitest';
import {
  describeTransports,
  history,
  invokedToken,
  returnedToken,
  runSequence,
  toolRejectedText,
  turnRequests,
  withoutReports,
} from './conformance-harness.js';

/** After a stop, the same session answers the next turn and its request carries the interrupted one. */
async function nextTurnWorks(
  environment: ClaudeTestEnvironment,
  runtime: AgentRuntime,
  sessionId: string,
  interruptedPrompt: string,
): Promise<void> {
  environment.api.enqueue(textReply('Back again.'));
  const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Are you there?' }] });
  expect(answerText(await runEvents(runtime, sessionId, runId))).toBe('Back again.');
  expect(history(environment, turnRequests(environment).length - 1)).toContain(interruptedPrompt);
}

/**
 * A stopped run's sequence without what is timing rather than protocol: deltas that land between
 * the stop request and the stop, and the usage event (present only when the stopped API call had
 * reported its tokens before the stop).
 */
function stopped(sequence: string[]): string[] {
  const requested = sequence.indexOf('run.interrupt_requested');
  return sequence.filter((token, index) => token !== 'run.usage' && (index <= requested || !token.endsWith('_delta…')));
}

describeTransports('interrupts in each phase of a run', ({ start }) => {
  async function open(options: { sandbox?: boolean; permissionMode?: 'bypass' } = {}) {
    const environment = await start({ sandbox: options.sandbox ?? false });
    const runtime = await environment.runtime();
    const { sessionId } = await runtime.openSession({
      workspace: { kind: 'directory', path: environment.workspace },
      ...(options.permissionMode ? { permissionMode: options.permissionMode } : {}),
    });
    return { environment, runtime, sessionId };
  }

  it('while streaming: output before the stop is delivered, the run ends interrupted', async () => {
    const { environment, runtime, sessionId } = await open();
    environment.api.enqueue(textReply('word '.repeat(200), { chunks: 100, delayMs: 50 }));
    const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Talk slowly.' }] });
    await waitForEvent(runtime, sessionId, 'run.message_delta', { where: (event) => event.runId === runId });
    const receipt = await runtime.interruptRun({ sessionId });
    expect(receipt.runId).toBe(runId);
    const events = await runEvents(runtime, sessionId, runId);
    expect(stopped(runSequence(events, runId))).toEqual([
      'run.started',
      'run.message_delta…',
      'run.interrupt_requested',
      'run.checkpointed',
      'run.completed:interrupted',
    ]);
    const partial = answerText(events);
    expect(partial.length).toBeGreaterThan(0);
    expect(partial.length).toBeLessThan('word '.repeat(200).length);
    await nextTurnWorks(environment, runtime, sessionId, 'Talk slowly.');
  });

  it('before the first byte of the answer', async () => {
    const { environment, runtime, sessionId } = await open();
    environment.api.enqueue(holdReply());
    const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Hold on.' }] });
    await environment.api.waitForRequests(1, { kind: 'turn' });
    await runtime.interruptRun({ sessionId, runId });
    expect(stopped(runSequence(await runEvents(runtime, sessionId, runId), runId))).toEqual([
      'run.started',
      'run.interrupt_requested',
      'run.checkpointed',
      'run.completed:interrupted',
    ]);
    await nextTurnWorks(environment, runtime, sessionId, 'Hold on.');
  });

  it("while a tool runs: the tool's process is gone, the session stays", async () => {
    const { environment, runtime, sessionId } = await open({ sandbox: true, permissionMode: 'bypass' });
    const forever = { command: 'tail -f /dev/null', description: 'Wait forever' };
    environment.api.enqueue(toolUseReply('Bash', forever));
    const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Run the long command.' }] });
    await waitForEvent(runtime, sessionId, 'run.tool_activity', { where: (event) => event.status === 'invoked' });
    await runtime.interruptRun({ sessionId });
    const events = await runEvents(runtime, sessionId, runId);
    expect(stopped(runSequence(events, runId))).toEqual([
      'run.started',
      invokedToken('Bash', forever),
      'run.interrupt_requested',
      // The CLI corrects its rejection wording for a call that was already running.
      returnedToken(
        'failed',
        'Bash',
        `${toolRejectedText} Correction to the text above: this call was stopped while running, not refused before it ran. It may have run in part or in full, and its changes may have been written. No permission prompt was involved. Work it started elsewhere (a remote command, a background process) may still be running, so check before starting the same work again. The instruction to stop and wait still stands.`,
      ),
      'run.checkpointed',
      'run.completed:interrupted',
    ]);
    // The CLI ends its tool's process itself, around the time it reports the stop (under load, a few
    // ms after): its exit is announced nowhere, so wait for it, bounded.
    const toolCommands = () =>
      processesWithEnvironment('HOME', environment.home)
        .map((pid) => (readProcessCommandLine(pid) ?? []).join(' '))
        .filter((command) => command.includes('tail'));
    await pollUntil(() => toolCommands().length === 0, { timeoutMs: 5_000 });
    expect(toolCommands()).toEqual([]);
    await nextTurnWorks(environment, runtime, sessionId, 'Run the long command.');
  });

  it('while an approval is pending: the agent withdraws the prompt, a late answer is refused', async () => {
    const { environment, runtime, sessionId } = await open();
    const pending = { command: 'echo x > pending.txt', description: 'Write' };
    environment.api.enqueue(toolUseReply('Bash', pending));
    const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Write it.' }] });
    const requested = await waitForEvent(runtime, sessionId, 'interaction.requested');
    await runtime.interruptRun({ sessionId });
    const events = await runEvents(runtime, sessionId, runId);
    expect(stopped(runSequence(events, runId))).toEqual([
      'run.started',
      invokedToken('Bash', pending),
      'interaction.requested:approval:Bash',
      'run.interrupt_requested',
      'interaction.withdrawn',
      returnedToken('failed', 'Bash', toolRejectedText),
      'run.checkpointed',
      'run.completed:interrupted',
    ]);
    expect((await runtime.getSession(sessionId)).pendingInteractions).toEqual([]);
    const late = await runtime
      .respondInteraction({ sessionId, interactionRef: requested.interactionRef, answer: { decision: 'approve' } })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(late).toMatchObject({ code: 'interaction_already_settled' });
    await nextTurnWorks(environment, runtime, sessionId, 'Write it.');
  });

  it('coalesces concurrent interrupts and answers an idle session with a no-op receipt', async () => {
    const { environment, runtime, sessionId } = await open();
    expect((await runtime.interruptRun({ sessionId })).runId).toBeNull();
    environment.api.enqueue(holdReply());
    const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Hold.' }] });
    await environment.api.waitForRequests(1, { kind: 'turn' });
    const receipts = await Promise.all([
      runtime.interruptRun({ sessionId }),
      runtime.interruptRun({ sessionId }),
      runtime.interruptRun({ sessionId, runId }),
    ]);
    expect(receipts.map((receipt) => receipt.runId)).toEqual([runId, runId, runId]);
    await runtime.waitForRun(runId);
    const events = await runtime.readEvents(sessionId);
    expect(stopped(runSequence(events, runId))).toEqual([
      'run.started',
      'run.interrupt_requested',
      'run.checkpointed',
      'run.completed:interrupted',
    ]);
    expect((await runtime.interruptRun({ sessionId })).runId).toBeNull();
    expect(withoutReports(await runtime.readEvents(sessionId)).length).toBe(withoutReports(events).length);
  });
});
