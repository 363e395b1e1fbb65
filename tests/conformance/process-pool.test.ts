import type { ProtocolEvent } from '@tether/protocol';
import { textReply } from '@tether/fake-anthropic-api';
import { expect, it } from 'vitest';
import { describeTransports } from './conformance-harness.js';

describeTransports('process pool', ({ start }) => {
  it('more sessions than processes: an idle process makes room at once, and queued turns start in queue order', async () => {
    const environment = await start();
    environment.api.setResponder(() => textReply('Answered.'));
    // The idle timer is long on purpose: only a holder going idle can free a slot within the test.
    const runtime = await environment.runtime({ provider: { maxProcesses: 2, idleReleaseMs: 15 * 60_000 } });
    const published: ProtocolEvent[] = [];
    runtime.observe((event) => published.push(event));
    const sessions = [];
    for (let index = 0; index < 5; index += 1)
      sessions.push(
        (await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } })).sessionId,
      );

    const runs = await Promise.all(
      sessions.map((sessionId, index) =>
        runtime.submitTurn({ sessionId, input: [{ type: 'text', text: `Turn ${index}.` }] }),
      ),
    );
    const completed = await Promise.all(runs.map((run) => runtime.waitForRun(run.runId)));
    expect(completed.map((run) => run.outcome)).toEqual([
      'succeeded',
      'succeeded',
      'succeeded',
      'succeeded',
      'succeeded',
    ]);

    const queued = published.filter(
      (event): event is Extract<ProtocolEvent, { type: 'run.queued' }> => event.type === 'run.queued',
    );
    expect(queued.map((event) => event.position)).toEqual([0, 1, 2]);
    // Each queued session got its process in the order it joined the queue.
    const queuedSessions = queued.map((event) => event.sessionId);
    const startOrder = published
      .filter((event) => event.type === 'session.process_started')
      .map((event) => event.sessionId);
    expect(startOrder.filter((sessionId) => queuedSessions.includes(sessionId))).toEqual(queuedSessions);
    // The room came from idle processes let go for them, not from the idle timer or a process ending by itself.
    const stopped = published.filter((event) => event.type === 'session.process_stopped');
    expect(stopped.map((event) => event.type === 'session.process_stopped' && event.reason)).toEqual([
      'idle',
      'idle',
      'idle',
    ]);
  });
});
