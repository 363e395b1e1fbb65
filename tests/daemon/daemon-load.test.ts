import { textReply } from '@tether/fake-anthropic-api';
import type { ProtocolEvent, SubmitTurnReceipt } from '@tether/protocol';
import { describe, expect, it } from 'vitest';
import {
  client,
  completes,
  daemonPerTest,
  openEventStream,
  openSession,
  readEventsUntil,
  sseFrames,
} from './daemon-test-helpers.js';

const fixture = daemonPerTest();

describe('a daemon with more sessions than processes', () => {
  it('finishes every turn: queued ones take the slot of a process gone idle, in queue order', async () => {
    const environment = await fixture.environment();
    environment.api.setResponder(() => textReply('Answered.'));
    // The idle timer is the default 15 minutes: only a holder going idle can make room within the test.
    const daemon = await fixture.daemonOn(environment, { providers: [environment.provider({ maxProcesses: 2 })] });
    const api = client(daemon);
    const sessions = await Promise.all(Array.from({ length: 5 }, () => openSession(api, environment.workspace)));
    const streams = await Promise.all(
      sessions.map(async (sessionId) => sseFrames((await openEventStream(daemon, sessionId)).body!)),
    );
    const receipts = await Promise.all(
      sessions.map((sessionId, index) =>
        api.command<SubmitTurnReceipt>({
          type: 'submit_turn',
          sessionId,
          input: [{ type: 'text', text: `Turn ${index}.` }],
        }),
      ),
    );
    const logs = await Promise.all(
      receipts.map((receipt, index) => readEventsUntil(streams[index]!, completes(receipt.runId))),
    );
    await Promise.all(streams.map((frames) => frames.return(undefined)));

    const completed = logs.map((events) => events.at(-1) as Extract<ProtocolEvent, { type: 'run.completed' }>);
    expect(completed.map((event) => event.outcome)).toEqual([
      'succeeded',
      'succeeded',
      'succeeded',
      'succeeded',
      'succeeded',
    ]);
    const queued = logs.flatMap((events) =>
      events.filter((event): event is Extract<ProtocolEvent, { type: 'run.queued' }> => event.type === 'run.queued'),
    );
    expect(queued.map((event) => event.position).sort()).toEqual([0, 1, 2]);
    // A queued run gets its process after every run queued before it (times are the daemon's, in ms).
    const startedAt = (sessionId: string) =>
      Date.parse(logs[sessions.indexOf(sessionId)]!.find((event) => event.type === 'session.process_started')!.at);
    const inQueueOrder = [...queued].sort((a, b) => a.position - b.position).map((event) => startedAt(event.sessionId));
    expect(inQueueOrder).toEqual([...inQueueOrder].sort((a, b) => a - b));
  });
});
