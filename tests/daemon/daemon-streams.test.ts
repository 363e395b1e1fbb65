import { textReply, toolUseReply } from '@tether/fake-anthropic-api';
import type { ProtocolEvent, SubmitTurnReceipt } from '@tether/protocol';
import { describe, expect, it } from 'vitest';
import {
  SocketClient,
  commandId,
  completes,
  daemonPerTest,
  openEventStream,
  openSession,
  readEventsUntil,
  sseFrames,
} from './daemon-test-helpers.js';

const { start } = daemonPerTest();

describe('event streams', () => {
  it('a client that reconnects with Last-Event-ID mid-turn gets exactly the events it missed', async () => {
    const { environment, daemon, api } = await start();
    const sessionId = await openSession(api, environment.workspace);
    environment.api.enqueue(textReply('word '.repeat(120), { chunks: 40, delayMs: 25 }));
    const first = new AbortController();
    const firstFrames = sseFrames((await openEventStream(daemon, sessionId, { signal: first.signal })).body!);
    const { runId } = await api.command<SubmitTurnReceipt>({
      type: 'submit_turn',
      sessionId,
      input: [{ type: 'text', text: 'Talk slowly.' }],
    });

    let deltas = 0;
    const before = await readEventsUntil(firstFrames, (event) => event.type === 'run.message_delta' && ++deltas === 5);
    first.abort();
    await firstFrames.return(undefined).catch(() => undefined);
    const lastSeen = before.at(-1)!.seq;

    // The header wins over ?after: a client resuming sends both, the header is the truth.
    const resumed = await openEventStream(daemon, sessionId, { lastEventId: lastSeen, after: 0 });
    const after = await readEventsUntil(sseFrames(resumed.body!), completes(runId));
    expect(after[0]!.seq).toBe(lastSeen + 1);
    // Still streaming when the client came back: the missing part is not only replay.
    expect(after.filter((event) => event.type === 'run.message_delta').length).toBeGreaterThan(1);

    const seen = [...before, ...after];
    expect(seen.map((event) => event.seq)).toEqual(seen.map((_, index) => index + 1));
    expect(seen).toEqual(await daemon.runtime.readEvents(sessionId, { afterSeq: 0, limit: seen.length }));
    expect(after.at(-1)).toMatchObject({ type: 'run.completed', outcome: 'succeeded' });
  });

  it('two clients answer one approval: the first wins, the second gets 409, both see one interaction.settled', async () => {
    const { environment, daemon, api } = await start();
    const sessionId = await openSession(api, environment.workspace);
    environment.api.enqueue(
      toolUseReply('Bash', { command: 'echo hi > approved.txt', description: 'Write a file' }),
      textReply('Done.'),
    );

    const sseClient = sseFrames((await openEventStream(daemon, sessionId)).body!);
    const socket = await SocketClient.connect(daemon);
    try {
      socket.send({ type: 'subscribe', id: 's1', sessionId, afterSeq: 0 });
      const { runId } = await api.command<SubmitTurnReceipt>({
        type: 'submit_turn',
        sessionId,
        input: [{ type: 'text', text: 'Write it.' }],
      });
      const requested = (await socket.waitFor((frame) => frame.event?.type === 'interaction.requested'))
        .event as Extract<ProtocolEvent, { type: 'interaction.requested' }>;
      const answer = {
        type: 'respond_interaction',
        sessionId,
        interactionRef: requested.interactionRef,
        answer: { decision: 'approve' },
      };

      // One answer over HTTP, one over the socket, at the same time.
      socket.send({ type: 'command', id: 'answer', command: { ...answer, commandId: commandId() } });
      const overHttp = await api.request('POST', '/v1/commands', { body: { ...answer, commandId: commandId() } });
      const overSocket = await socket.waitFor((frame) => frame.id === 'answer');

      const outcomes = [
        overHttp.status === 200 ? 'won' : 'lost',
        overSocket.type === 'receipt' ? 'won' : 'lost',
      ].sort();
      expect(outcomes).toEqual(['lost', 'won']);
      const loser =
        overHttp.status === 200
          ? { status: 409, body: { error: overSocket.error } }
          : { status: overHttp.status, body: await overHttp.json() };
      expect(loser).toMatchObject({ status: 409, body: { error: { code: 'interaction_already_settled' } } });

      const overSse = await readEventsUntil(sseClient, completes(runId));
      await socket.waitFor((frame) => frame.event?.type === 'run.completed');
      for (const events of [overSse, socket.events(sessionId)]) {
        const settled = events.filter((event) => event.type === 'interaction.settled');
        expect(settled).toHaveLength(1);
        expect(settled[0]).toMatchObject({ interactionRef: requested.interactionRef, outcome: 'approved', by: 'host' });
        expect(events.at(-1)).toMatchObject({ type: 'run.completed', outcome: 'succeeded' });
      }
    } finally {
      socket.close();
      await sseClient.return(undefined);
    }
  });
});
