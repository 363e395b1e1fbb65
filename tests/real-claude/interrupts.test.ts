import { holdReply, textReply, toolUseReply } from '@tether/fake-anthropic-api';
import type { AgentRuntime } from '@tether/runtime';
import { readFileSync } from 'node:fs';
import { type ClaudeTestEnvironment, answerText, createClaudeTestEnvironment, processesWithEnvironment, runEvents, waitForEvent } from '@tether/testkit';
import { afterEach, describe, expect, it } from 'vitest';

let environment: ClaudeTestEnvironment;

afterEach(async () => {
  await environment?.cleanup();
});

async function start(options: { sandbox?: boolean; permissionMode?: 'bypass' } = {}) {
  environment = await createClaudeTestEnvironment({ sandbox: options.sandbox ?? false });
  const runtime = await environment.runtime();
  const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace }, ...(options.permissionMode ? { permissionMode: options.permissionMode } : {}) });
  return { runtime, sessionId };
}

function history(index: number): string {
  const turns = environment.api.requests.filter((request) => request.kind === 'turn');
  return JSON.stringify((turns[index]!.body as { messages: unknown }).messages);
}

/** After a stop, the same session answers the next turn and its request carries the interrupted one. */
async function nextTurnWorks(runtime: AgentRuntime, sessionId: string, interruptedPrompt: string): Promise<void> {
  environment.api.enqueue(textReply('Back again.'));
  const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Are you there?' }] });
  expect(answerText(await runEvents(runtime, sessionId, runId))).toBe('Back again.');
  const last = environment.api.requests.filter((request) => request.kind === 'turn').length - 1;
  expect(history(last)).toContain(interruptedPrompt);
}

describe('interrupts through the real claude binary', () => {
  it('stops a streaming answer: output before the stop is delivered, the run ends interrupted', async () => {
    const { runtime, sessionId } = await start();
    environment.api.enqueue(textReply('word '.repeat(200), { chunks: 100, delayMs: 50 }));
    const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Talk slowly.' }] });
    await waitForEvent(runtime, sessionId, 'run.message_delta', { where: (event) => event.runId === runId });
    const receipt = await runtime.interruptRun({ sessionId });
    expect(receipt.runId).toBe(runId);
    const events = await runEvents(runtime, sessionId, runId);
    expect(events.at(-1)).toMatchObject({ type: 'run.completed', outcome: 'interrupted' });
    expect(events.filter((event) => event.type === 'run.interrupt_requested')).toHaveLength(1);
    const partial = answerText(events);
    expect(partial.length).toBeGreaterThan(0);
    expect(partial.length).toBeLessThan('word '.repeat(200).length);
    await nextTurnWorks(runtime, sessionId, 'Talk slowly.');
  });

  it('stops a run before the first byte of the answer', async () => {
    const { runtime, sessionId } = await start();
    environment.api.enqueue(holdReply());
    const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Hold on.' }] });
    await environment.api.waitForRequests(1, { kind: 'turn' });
    await runtime.interruptRun({ sessionId, runId });
    expect(await runtime.waitForRun(runId)).toMatchObject({ outcome: 'interrupted' });
    await nextTurnWorks(runtime, sessionId, 'Hold on.');
  });

  it('stops a running tool', async () => {
    const { runtime, sessionId } = await start({ sandbox: true, permissionMode: 'bypass' });
    environment.api.enqueue(toolUseReply('Bash', { command: 'tail -f /dev/null', description: 'Wait forever' }));
    const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Run the long command.' }] });
    await waitForEvent(runtime, sessionId, 'run.tool_activity', { where: (event) => event.status === 'invoked' });
    await runtime.interruptRun({ sessionId });
    const events = await runEvents(runtime, sessionId, runId);
    expect(events.at(-1)).toMatchObject({ type: 'run.completed', outcome: 'interrupted' });
    // The stopped tool's process is gone; only the CLI itself (the session stays open) remains.
    const commands = processesWithEnvironment('HOME', environment.home).map((pid) => readFileSync(`/proc/${pid}/cmdline`, 'utf8'));
    expect(commands.filter((command) => command.includes('tail'))).toEqual([]);
    await nextTurnWorks(runtime, sessionId, 'Run the long command.');
  });

  it('stops a run waiting for an approval: the CLI withdraws the prompt', async () => {
    const { runtime, sessionId } = await start();
    environment.api.enqueue(toolUseReply('Bash', { command: 'echo x > pending.txt', description: 'Write' }));
    const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Write it.' }] });
    await waitForEvent(runtime, sessionId, 'interaction.requested');
    await runtime.interruptRun({ sessionId });
    const events = await runEvents(runtime, sessionId, runId);
    const types = events.map((event) => event.type);
    expect(types).toContain('interaction.withdrawn');
    expect(events.at(-1)).toMatchObject({ type: 'run.completed', outcome: 'interrupted' });
    expect((await runtime.getSession(sessionId)).pendingInteractions).toEqual([]);
    await nextTurnWorks(runtime, sessionId, 'Write it.');
  });

  it('coalesces concurrent interrupts and answers an idle session with a no-op receipt', async () => {
    const { runtime, sessionId } = await start();
    const idle = await runtime.interruptRun({ sessionId });
    expect(idle.runId).toBeNull();
    environment.api.enqueue(holdReply());
    const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Hold.' }] });
    await environment.api.waitForRequests(1, { kind: 'turn' });
    const receipts = await Promise.all([runtime.interruptRun({ sessionId }), runtime.interruptRun({ sessionId }), runtime.interruptRun({ sessionId, runId })]);
    expect(receipts.map((receipt) => receipt.runId)).toEqual([runId, runId, runId]);
    await runtime.waitForRun(runId);
    const events = await runtime.readEvents(sessionId);
    expect(events.filter((event) => event.type === 'run.interrupt_requested')).toHaveLength(1);
    expect(events.filter((event) => event.type === 'run.completed')).toHaveLength(1);
    const afterIdle = await runtime.interruptRun({ sessionId });
    expect(afterIdle.runId).toBeNull();
    expect((await runtime.readEvents(sessionId)).length).toBe(events.length);
  });
});
