import { errorReply, holdReply, textReply, thinkingReply, toolUseReply } from '@tether/fake-anthropic-api';
import { type ClaudeTestEnvironment, agentErrorOf, answerText, createClaudeTestEnvironment, runEvents } from '@tether/testkit';
import { afterEach, describe, expect, it } from 'vitest';

let environment: ClaudeTestEnvironment;

afterEach(async () => {
  await environment?.cleanup();
});

function requestText(body: unknown): string {
  return JSON.stringify((body as { messages?: unknown }).messages ?? []);
}


describe('conversations through the real claude binary', () => {
  it('keeps two turns in one conversation: the second request carries the first exchange', async () => {
    environment = await createClaudeTestEnvironment();
    environment.api.enqueue(textReply('The secret word is PINEAPPLE.'), textReply('You said PINEAPPLE.'));
    const runtime = await environment.runtime();
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    const first = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Remember a secret word.' }] });
    expect((await runtime.waitForRun(first.runId)).outcome).toBe('succeeded');
    const second = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'What was the word?' }] });
    const events = await runEvents(runtime, sessionId, second.runId);
    expect(answerText(events)).toBe('You said PINEAPPLE.');
    const turns = environment.api.requests.filter((request) => request.kind === 'turn');
    expect(turns).toHaveLength(2);
    const history = requestText(turns[1]!.body);
    expect(history).toContain('Remember a secret word.');
    expect(history).toContain('The secret word is PINEAPPLE.');
    expect(history).toContain('What was the word?');
  });

  it('streams thinking separately from the answer', async () => {
    environment = await createClaudeTestEnvironment();
    environment.api.enqueue(thinkingReply('Let me think about foxes.', 'Foxes are quick.', { chunks: 3 }));
    const runtime = await environment.runtime();
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Think.' }] });
    const events = await runEvents(runtime, sessionId, runId);
    const thinking = events.filter((event) => event.type === 'run.thinking_delta').map((event) => (event as { text: string }).text).join('');
    expect(thinking).toBe('Let me think about foxes.');
    expect(answerText(events)).toBe('Foxes are quick.');
    const blocks = new Set(events.filter((event) => event.type === 'run.thinking_delta' || event.type === 'run.message_delta').map((event) => (event as { blockId: string }).blockId));
    expect(blocks.size).toBe(2);
  });

  it('reports tool activity in bypass mode (IS_SANDBOX=1) and keeps text before and after the tool apart', async () => {
    environment = await createClaudeTestEnvironment({ sandbox: true });
    environment.api.enqueue(
      toolUseReply('Bash', { command: 'echo tether-tool-output', description: 'Print a marker' }, { text: 'Running it.' }),
      textReply('The command printed the marker.'),
    );
    const runtime = await environment.runtime();
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace }, permissionMode: 'bypass' });
    const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Run the marker command.' }] });
    const events = await runEvents(runtime, sessionId, runId);
    const tools = events.filter((event) => event.type === 'run.tool_activity');
    expect(tools.map((event) => [(event as { status: string }).status, (event as { toolName: string }).toolName])).toEqual([
      ['invoked', 'Bash'],
      ['succeeded', 'Bash'],
    ]);
    const messageBlocks = [...new Set(events.filter((event) => event.type === 'run.message_delta').map((event) => (event as { blockId: string }).blockId))];
    expect(messageBlocks).toHaveLength(2);
    expect(answerText(events)).toBe('Running it.The command printed the marker.');
    const followUp = environment.api.requests.filter((request) => request.kind === 'turn')[1]!;
    expect(followUp.view?.toolResults[0]?.content).toContain('tether-tool-output');
    expect(events.at(-1)).toMatchObject({ type: 'run.completed', outcome: 'succeeded' });
  });

  it('fails a run on an API 500 with the status, surfaces the retry, and the next turn works', async () => {
    environment = await createClaudeTestEnvironment({ maxRetries: 1 });
    environment.api.enqueue(errorReply(500), errorReply(500), textReply('Recovered.'));
    const runtime = await environment.runtime();
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    const failed = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'First.' }] });
    const events = await runEvents(runtime, sessionId, failed.runId);
    expect(events.find((event) => event.type === 'run.retrying')).toMatchObject({ attempt: 1, maxAttempts: 1, httpStatus: 500 });
    expect(events.at(-1)).toMatchObject({ type: 'run.completed', outcome: 'failed', error: { code: 'provider_api_error', details: { httpStatus: 500 } } });
    expect(answerText(events)).toBe('');
    const next = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Second.' }] });
    expect(answerText(await runEvents(runtime, sessionId, next.runId))).toBe('Recovered.');
  });

  it('refuses a second turn while the first is running, and a duplicate commandId does not start another run', async () => {
    environment = await createClaudeTestEnvironment();
    environment.api.enqueue(holdReply());
    const runtime = await environment.runtime();
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    const command = { type: 'submit_turn', commandId: 'turn-a', sessionId, input: [{ type: 'text', text: 'Hold on.' }] } as const;
    const receipt = await runtime.dispatch(command);
    await environment.api.waitForRequests(1, { kind: 'turn' });
    expect(await runtime.dispatch(command)).toEqual(receipt);
    const error = await agentErrorOf(runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Another.' }] }));
    expect(error.code).toBe('run_active');
    expect(environment.api.requests.filter((request) => request.kind === 'turn')).toHaveLength(1);
    expect((await runtime.getSession(sessionId)).activeRunId).toBe(receipt.runId);
  });

  it('ends a session with close_session, refuses later turns, and reopens it with its history', async () => {
    environment = await createClaudeTestEnvironment();
    environment.api.enqueue(textReply('Noted: MANGO.'), textReply('It was MANGO.'));
    const runtime = await environment.runtime();
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    const first = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Remember MANGO.' }] });
    await runtime.waitForRun(first.runId);
    await runtime.closeSession({ sessionId });
    expect((await agentErrorOf(runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Again?' }] }))).code).toBe('session_closed');
    await runtime.openSession({ continueSession: sessionId });
    const second = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'What fruit?' }] });
    expect(answerText(await runEvents(runtime, sessionId, second.runId))).toBe('It was MANGO.');
    const turns = environment.api.requests.filter((request) => request.kind === 'turn');
    expect(requestText(turns[1]!.body)).toContain('Remember MANGO.');
  });

  it('reports bypass refused as root without IS_SANDBOX with what to do', async () => {
    environment = await createClaudeTestEnvironment({ sandbox: false });
    const runtime = await environment.runtime();
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace }, permissionMode: 'bypass' });
    const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Hi.' }] });
    const run = await runtime.waitForRun(runId);
    if (process.getuid?.() === 0) {
      expect(run).toMatchObject({ outcome: 'failed', error: { code: 'provider_configuration_refused', details: { reason: 'bypass_root' } } });
      expect(run.error?.message).toContain('IS_SANDBOX=1');
    } else {
      expect(run.outcome).toBe('succeeded');
    }
  });
});

