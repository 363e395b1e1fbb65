import { errorReply, textReply } from '@tether/fake-anthropic-api';
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

  it('a conversation the agent cannot compact enough fails the turn prompt_too_long, saying what to do; the session goes on', async () => {
    const environment = await start();
    let tooLong = false;
    // Once the context is full, the model refuses every request, the agent's compaction requests too.
    environment.api.setResponder(() =>
      tooLong
        ? errorReply(400, {
            errorType: 'invalid_request_error',
            message: 'prompt is too long: 250000 tokens > 200000 maximum',
          })
        : textReply('Fine.'),
    );
    const runtime = await environment.runtime();
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    const turn = async (text: string) => {
      const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text }] });
      return runtime.waitForRun(runId);
    };
    expect(await turn('First question.')).toMatchObject({ outcome: 'succeeded' });
    tooLong = true;
    const failed = await turn('Second question.');
    expect(failed).toMatchObject({
      outcome: 'failed',
      error: { code: 'provider_api_error', retryable: false, details: { reason: 'prompt_too_long', httpStatus: 400 } },
    });
    expect(failed.error?.message).toContain('fork_session');
    expect(environment.api.requests.some((request) => request.kind === 'compaction')).toBe(true);
    tooLong = false;
    expect(await turn('Third question.')).toMatchObject({ outcome: 'succeeded' });
  });
});
