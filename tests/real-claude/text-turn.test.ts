import { textReply } from '@tether/fake-anthropic-api';
import { type ClaudeTestEnvironment, answerText, createClaudeTestEnvironment, runEvents } from '@tether/testkit';
import { afterEach, describe, expect, it } from 'vitest';

let environment: ClaudeTestEnvironment;

afterEach(async () => {
  await environment?.cleanup();
});

describe('a text turn through the real claude binary', () => {
  it('streams the answer as several deltas and reports the fake API usage', async () => {
    environment = await createClaudeTestEnvironment();
    environment.api.enqueue(textReply('The quick brown fox jumps over the lazy dog.', { chunks: 6, usage: { inputTokens: 321, outputTokens: 45, cacheReadTokens: 7, cacheCreationTokens: 3 } }));
    const runtime = await environment.runtime();
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Say the fox sentence.' }] });
    const events = await runEvents(runtime, sessionId, runId);
    const deltas = events.filter((event) => event.type === 'run.message_delta');
    expect(deltas.length).toBeGreaterThanOrEqual(6);
    expect(answerText(events)).toBe('The quick brown fox jumps over the lazy dog.');
    expect(events.at(-1)).toMatchObject({ type: 'run.completed', outcome: 'succeeded' });
    const usage = events.find((event) => event.type === 'run.usage');
    expect(usage).toMatchObject({ inputTokens: 321, outputTokens: 45, cacheReadTokens: 7, cacheCreationTokens: 3 });
    expect(typeof (usage as { costUsd: unknown }).costUsd).toBe('number');
    const snapshot = await runtime.getSession(sessionId);
    expect(snapshot.providerSessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(snapshot.usage.inputTokens).toBe(321);
  });
});
