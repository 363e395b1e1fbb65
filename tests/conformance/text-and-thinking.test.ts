import { textReply, thinkingReply, toolUseReply } from '@tether/fake-anthropic-api';
import { answerText, runEvents } from '@tether/testkit';
import { expect, it } from 'vitest';
import {
  bypassTurn,
  describeTransports,
  firstTurnOpening,
  history,
  runSequence,
  sessionSequence,
  turnRequests,
} from './conformance-harness.js';
import { conversationsClosedAfterEach } from './provider-conversation.js';

describeTransports('text, thinking and tool turns', ({ start }) => {
  const opening = conversationsClosedAfterEach();

  it('streams the answer as deltas, reports the fake API usage, and completes', async () => {
    const environment = await start();
    environment.api.enqueue(
      textReply('The quick brown fox jumps over the lazy dog.', {
        chunks: 6,
        usage: { inputTokens: 321, outputTokens: 45, cacheReadTokens: 7, cacheCreationTokens: 3 },
      }),
    );
    const runtime = await environment.runtime();
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Say the fox sentence.' }] });
    const events = await runEvents(runtime, sessionId, runId);
    expect(await sessionSequence(runtime, sessionId)).toEqual([
      'session.opened',
      'run.started',
      ...firstTurnOpening,
      'run.message_delta…',
      'run.usage',
      'run.checkpointed',
      'run.completed:succeeded:end_turn',
    ]);
    // Six deltas from the agent; those of one block that wait for the same commit arrive as one event.
    const deltas = events.filter((event) => event.type === 'run.message_delta');
    expect(deltas.length).toBeGreaterThanOrEqual(1);
    expect(deltas.length).toBeLessThanOrEqual(6);
    expect(answerText(events)).toBe('The quick brown fox jumps over the lazy dog.');
    const usage = events.find((event) => event.type === 'run.usage');
    expect(usage).toMatchObject({
      inputTokens: 321,
      outputTokens: 45,
      cacheReadTokens: 7,
      cacheCreationTokens: 3,
      costUsd: expect.any(Number),
    });
    const snapshot = await runtime.getSession(sessionId);
    expect(snapshot.providerSessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(snapshot.usage.inputTokens).toBe(321);
  });

  it('streams thinking separately from the answer', async () => {
    const environment = await start();
    environment.api.enqueue(thinkingReply('Let me think about foxes.', 'Foxes are quick.', { chunks: 3 }));
    const runtime = await environment.runtime();
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Think.' }] });
    const events = await runEvents(runtime, sessionId, runId);
    expect(runSequence(events, runId)).toEqual([
      'run.started',
      'run.thinking_delta…',
      'run.message_delta…',
      'run.usage',
      'run.checkpointed',
      'run.completed:succeeded:end_turn',
    ]);
    const thinking = events
      .filter((event) => event.type === 'run.thinking_delta')
      .map((event) => (event as { text: string }).text)
      .join('');
    expect(thinking).toBe('Let me think about foxes.');
    expect(answerText(events)).toBe('Foxes are quick.');
    const blocks = new Set(
      events
        .filter((event) => event.type === 'run.thinking_delta' || event.type === 'run.message_delta')
        .map((event) => (event as { blockId: string }).blockId),
    );
    expect(blocks.size).toBe(2);
  });

  it('keeps two turns in one conversation: the second request carries the first exchange', async () => {
    const environment = await start();
    environment.api.enqueue(textReply('The secret word is PINEAPPLE.'), textReply('You said PINEAPPLE.'));
    const runtime = await environment.runtime();
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    const first = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Remember a secret word.' }] });
    await runtime.waitForRun(first.runId);
    const second = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'What was the word?' }] });
    const events = await runEvents(runtime, sessionId, second.runId);
    expect(answerText(events)).toBe('You said PINEAPPLE.');
    expect(await sessionSequence(runtime, sessionId)).toEqual([
      'session.opened',
      'run.started',
      ...firstTurnOpening,
      'run.message_delta…',
      'run.usage',
      'run.checkpointed',
      'run.completed:succeeded:end_turn',
      'run.started',
      'run.message_delta…',
      'run.usage',
      'run.checkpointed',
      'run.completed:succeeded:end_turn',
    ]);
    expect(turnRequests(environment)).toHaveLength(2);
    expect(history(environment, 1)).toContain('Remember a secret word.');
    expect(history(environment, 1)).toContain('The secret word is PINEAPPLE.');
    expect(history(environment, 1)).toContain('What was the word?');
  });

  it('reports tool activity in bypass mode (IS_SANDBOX=1) and keeps text before and after the tool apart', async () => {
    const environment = await start({ sandbox: true });
    environment.api.enqueue(
      toolUseReply(
        'Bash',
        { command: 'echo tether-tool-output', description: 'Print a marker' },
        { text: 'Running it.' },
      ),
      textReply('The command printed the marker.'),
    );
    const { runId, events } = await bypassTurn(environment, 'Run the marker command.');
    expect(runSequence(events, runId)).toEqual([
      'run.started',
      'run.message_delta…',
      'run.tool_activity:invoked:Bash {"command":"echo tether-tool-output","description":"Print a marker"}',
      'run.tool_activity:succeeded:Bash → "tether-tool-output"',
      'run.message_delta…',
      'run.usage',
      'run.checkpointed',
      'run.completed:succeeded:end_turn',
    ]);
    const messageBlocks = new Set(
      events
        .filter((event) => event.type === 'run.message_delta')
        .map((event) => (event as { blockId: string }).blockId),
    );
    expect(messageBlocks.size).toBe(2);
    expect(answerText(events)).toBe('Running it.The command printed the marker.');
    expect(turnRequests(environment)[1]!.view?.toolResults[0]?.content).toContain('tether-tool-output');
  });

  it('says when each message ended: after its text and tool call, before the run ends', async () => {
    const environment = await start({ sandbox: true });
    const conversation = await opening(environment, { configuration: { permissionMode: 'bypass' } });
    environment.api.enqueue(
      toolUseReply('Bash', { command: 'echo ended', description: 'Print' }, { text: 'Running it.' }),
      textReply('It printed ended.', { chunks: 4 }),
    );
    const { completion } = await conversation.turn('Run it.');
    expect(completion.outcome).toBe('succeeded');
    const types = conversation.parts.map((part) => part.type);
    const invoked = types.indexOf('run.tool_activity');
    const lastDelta = types.lastIndexOf('run.message_delta');
    const usage = types.indexOf('run.usage');
    // One call per API message: the tool call's, then the answer's, each before what the next brought.
    expect(conversation.messageEnds).toHaveLength(2);
    const [first, second] = conversation.messageEnds as [number, number];
    expect(first).toBeGreaterThan(invoked);
    expect(first).toBeLessThanOrEqual(types.indexOf('run.tool_activity', invoked + 1));
    expect(second).toBeGreaterThan(lastDelta);
    expect(second).toBeLessThanOrEqual(usage);
    expect(types.indexOf('run.completed')).toBeGreaterThanOrEqual(second);
  });
});
