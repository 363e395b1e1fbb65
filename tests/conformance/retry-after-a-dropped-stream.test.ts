import { dropConnectionReply, textReply } from '@tether/fake-anthropic-api';
import type { ProtocolEvent } from '@tether/protocol';
import { answerText, runEvents, waitForEvent } from '@tether/testkit';
import { expect, it } from 'vitest';
import { describeTransports, history, runSequence } from './conformance-harness.js';

/** The run's events without the text of the blocks a retry abandoned: what the answer is. */
function withoutAbandoned(events: readonly ProtocolEvent[]): ProtocolEvent[] {
  const abandoned = new Set(
    events.flatMap((event) =>
      event.type === 'run.retrying' || event.type === 'run.completed' ? (event.abandonedBlockIds ?? []) : [],
    ),
  );
  return events.filter(
    (event) =>
      !((event.type === 'run.message_delta' || event.type === 'run.thinking_delta') && abandoned.has(event.blockId)),
  );
}

describeTransports('a model call retried after its connection dropped mid-answer', ({ start }) => {
  it('names the blocks the failed attempt had streamed; the text of the others is the answer, exactly', async () => {
    const environment = await start({ maxRetries: 2 });
    const answer = 'Hello there, this is the whole answer of the retried call.';
    // The first attempt streams two deltas, then its connection breaks once the host has shown them.
    environment.api.enqueue(dropConnectionReply(2, { holdBeforeDrop: true }), textReply(answer, { chunks: 4 }));
    const runtime = await environment.runtime();
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Say hello.' }] });
    const cut = await waitForEvent(runtime, sessionId, 'run.message_delta');
    environment.api.releaseHeld();
    const events = await runEvents(runtime, sessionId, runId);

    expect(runSequence(events, runId)).toEqual([
      'run.started',
      'run.message_delta…',
      'run.retrying:connection',
      'run.message_delta…',
      'run.usage',
      'run.checkpointed',
      'run.completed:succeeded:end_turn',
    ]);
    // Streamed as it came (never held back), then named abandoned by the retry.
    expect(cut.text.length).toBeGreaterThan(0);
    expect(events.find((event) => event.type === 'run.retrying')).toMatchObject({
      httpStatus: null,
      abandonedBlockIds: [cut.blockId],
    });
    expect(answerText(events)).not.toBe(answer);
    expect(answerText(withoutAbandoned(events))).toBe(answer);

    // The conversation the agent keeps has the retried answer only, as the events say.
    environment.api.enqueue(textReply('Done.'));
    const next = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Again.' }] });
    await runtime.waitForRun(next.runId);
    expect(history(environment, 2)).toContain(answer);
    expect(history(environment, 2)).not.toContain(cut.text);
  });

  it("when every retry fails too, the run ends naming the last attempt's blocks: no text of it is an answer", async () => {
    const environment = await start({ maxRetries: 1 });
    // Both streamed attempts stream two deltas, then break once the host has shown them; so does the
    // CLI's last resort, the same call without streaming.
    environment.api.enqueue(
      dropConnectionReply(2, { holdBeforeDrop: true }),
      dropConnectionReply(2, { holdBeforeDrop: true }),
      dropConnectionReply(),
    );
    const runtime = await environment.runtime();
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Say hello.' }] });
    const first = await waitForEvent(runtime, sessionId, 'run.message_delta');
    environment.api.releaseHeld();
    const retrying = await waitForEvent(runtime, sessionId, 'run.retrying');
    const last = await waitForEvent(runtime, sessionId, 'run.message_delta', { afterSeq: retrying.seq });
    environment.api.releaseHeld();
    const events = await runEvents(runtime, sessionId, runId);

    expect(retrying.abandonedBlockIds).toEqual([first.blockId]);
    expect(events.at(-1)).toMatchObject({
      type: 'run.completed',
      outcome: 'failed',
      error: { code: 'provider_api_error' },
      abandonedBlockIds: [last.blockId],
    });
    expect(answerText(events).length).toBeGreaterThan(0);
    expect(answerText(withoutAbandoned(events))).toBe('');

    // The agent kept none of that text either.
    environment.api.enqueue(textReply('Done.'));
    const next = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Again.' }] });
    await runtime.waitForRun(next.runId);
    expect(history(environment, 2)).not.toContain(last.text);
  });

  it("when the last resort, the same call without streaming, answers: the run ends naming the streamed attempt's blocks, the rest is the answer", async () => {
    const environment = await start({ maxRetries: 1 });
    const answer = 'Hello there, this is the answer the call without streaming gave.';
    environment.api.enqueue(
      dropConnectionReply(2, { holdBeforeDrop: true }),
      dropConnectionReply(2, { holdBeforeDrop: true }),
      textReply(answer),
    );
    const runtime = await environment.runtime();
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Say hello.' }] });
    await waitForEvent(runtime, sessionId, 'run.message_delta');
    environment.api.releaseHeld();
    const retrying = await waitForEvent(runtime, sessionId, 'run.retrying');
    const last = await waitForEvent(runtime, sessionId, 'run.message_delta', { afterSeq: retrying.seq });
    environment.api.releaseHeld();
    const events = await runEvents(runtime, sessionId, runId);

    expect(events.at(-1)).toMatchObject({
      type: 'run.completed',
      outcome: 'succeeded',
      abandonedBlockIds: [last.blockId],
    });
    expect(answerText(withoutAbandoned(events))).toBe(answer);
  });
});
