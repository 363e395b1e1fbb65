import type { ProtocolEvent } from '@tether/protocol';
import { textReply } from '@tether/fake-anthropic-api';
import { expect, it, vi } from 'vitest';
import { describeTransports } from './conformance-harness.js';

describeTransports('starting the agent at open', ({ start }) => {
  it('open_session with startAgent starts the agent before any turn, and the first turn runs on it', async () => {
    const environment = await start();
    environment.api.setResponder(() => textReply('Answered.'));
    const runtime = await environment.runtime();
    const published: ProtocolEvent[] = [];
    runtime.observe((event) => published.push(event));
    const { sessionId } = await runtime.openSession({
      workspace: { kind: 'directory', path: environment.workspace },
      startAgent: true,
    });
    const started = () => published.filter((event) => event.type === 'session.process_started');
    await vi.waitFor(() => expect(started()).toHaveLength(1), { timeout: 30_000 });

    const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Hello.' }] });
    const run = await runtime.waitForRun(runId);
    expect(run.outcome).toBe('succeeded');
    const answer = published
      .filter((event) => event.type === 'run.message_delta' && event.runId === runId)
      .map((event) => (event.type === 'run.message_delta' ? event.text : ''))
      .join('');
    expect(answer).toBe('Answered.');
    // The turn ran on the agent started at open: no second start.
    expect(started()).toHaveLength(1);
    expect(published.filter((event) => event.type === 'session.process_stopped')).toEqual([]);
  });
});
