import { type FakeReply, holdReply, textReply } from '@tether/fake-anthropic-api';
import type { ProtocolEvent } from '@tether/protocol';
import { waitForEvent, killProcessesWithEnvironment } from '@tether/testkit';
import { expect, it } from 'vitest';
import { describeTransports } from './conformance-harness.js';

/**
 * A run stopped while the model answers: the CLI's result then counts no token in its `usage` (the
 * main loop's finished answers only), while its per-model counts since the last result hold the cut
 * call (its output estimated from what had streamed): the calls its cost covers.
 */
describeTransports('the usage of an interrupted run', ({ start }) => {
  async function interruptedRun(reply: FakeReply, stopAfter: 'first_delta' | 'request') {
    const environment = await start();
    environment.api.enqueue(reply);
    const runtime = await environment.runtime();
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Talk slowly.' }] });
    if (stopAfter === 'request') await environment.api.waitForRequests(1, { kind: 'turn' });
    else await waitForEvent(runtime, sessionId, 'run.message_delta');
    await runtime.interruptRun({ sessionId, runId });
    expect((await runtime.waitForRun(runId)).outcome).toBe('interrupted');
    const usage = (await runtime.readEvents(sessionId)).filter(
      (event): event is Extract<ProtocolEvent, { type: 'run.usage' }> =>
        event.type === 'run.usage' && event.runId === runId,
    );
    return { runtime, runId, usage };
  }

  it('stopped while streaming: the cut call counts its tokens beside its cost, in the event and the run', async () => {
    const { runtime, runId, usage } = await interruptedRun(
      textReply('word '.repeat(400), { chunks: 200, delayMs: 20, usage: { inputTokens: 123, outputTokens: 456 } }),
      'first_delta',
    );
    expect(usage).toHaveLength(1);
    const [reported] = usage;
    expect(reported?.costUsd).toBeGreaterThan(0);
    expect(reported).toMatchObject({ inputTokens: 123, cacheReadTokens: 0, cacheCreationTokens: 0 });
    // The CLI's estimate from what had streamed: some, not the whole answer's.
    expect(reported?.outputTokens).toBeGreaterThan(0);
    expect(reported?.outputTokens).toBeLessThan(456);
    expect((await runtime.getRun(runId)).usage).toEqual({
      inputTokens: 123,
      outputTokens: reported?.outputTokens,
      cacheReadTokens: 0,
      cacheCreationTokens: 0,
      costUsd: reported?.costUsd,
    });
  });

  it('stopped before the first delta: a cost, when one is reported (timing), comes with the tokens it was computed from', async () => {
    const { runId, usage } = await interruptedRun(holdReply(), 'request');
    for (const reported of usage) {
      expect(reported.runId).toBe(runId);
      const tokens =
        reported.inputTokens + reported.outputTokens + reported.cacheReadTokens + reported.cacheCreationTokens;
      if ((reported.costUsd ?? 0) > 0) expect(tokens).toBeGreaterThan(0);
    }
  });

  it('killed while streaming (no result of the CLI): the run counts the tokens its stream reported, with no cost', async () => {
    const environment = await start();
    environment.api.enqueue(
      textReply('word '.repeat(400), { chunks: 200, delayMs: 20, usage: { inputTokens: 321, outputTokens: 654 } }),
    );
    const runtime = await environment.runtime();
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Talk slowly.' }] });
    await waitForEvent(runtime, sessionId, 'run.message_delta');
    killProcessesWithEnvironment('HOME', environment.home);
    expect(await runtime.waitForRun(runId)).toMatchObject({
      outcome: 'failed',
      error: { code: 'provider_crashed' },
      usage: { inputTokens: 321, cacheReadTokens: 0, cacheCreationTokens: 0, costUsd: null },
    });
    const usage = (await runtime.readEvents(sessionId)).filter((event) => event.type === 'run.usage');
    expect(usage).toEqual([expect.objectContaining({ runId, inputTokens: 321, costUsd: null })]);
  });
});
