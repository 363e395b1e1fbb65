import { textReply } from '@tether/fake-anthropic-api';
import { answerText, runEvents } from '@tether/testkit';
import { expect, it } from 'vitest';
import { describeTransports, runSequence } from './conformance-harness.js';

describeTransports('automatic compaction', ({ start }) => {
  it('a context that filled up is compacted by the agent before the next call: the run says so and answers', async () => {
    const environment = await start();
    // The first answer reports 995,000 input tokens, of the model's 1,000,000-token window.
    environment.api.enqueue(
      textReply('First answer.', { usage: { inputTokens: 995_000, outputTokens: 10 } }),
      textReply('Second answer, after the compaction.'),
    );
    const runtime = await environment.runtime();
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    const first = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'First question.' }] });
    expect(runSequence(await runEvents(runtime, sessionId, first.runId), first.runId)).not.toContain(
      'context.compacted',
    );
    const second = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Second question.' }] });
    const events = await runEvents(runtime, sessionId, second.runId);
    const compacted = events.find((event) => event.type === 'context.compacted');
    expect(compacted).toMatchObject({ runId: second.runId, trigger: 'automatic' });
    expect(compacted?.type === 'context.compacted' && compacted.tokensBefore).toBeGreaterThan(0);
    expect(environment.api.requests.some((request) => request.kind === 'compaction')).toBe(true);
    expect(answerText(events)).toBe('Second answer, after the compaction.');
    expect(runSequence(events, second.runId).at(-1)).toBe('run.completed:succeeded:end_turn');
  });
});
