import { textReply } from '@tether/fake-anthropic-api';
import type { SessionSnapshot, SubmitTurnReceipt } from '@tether/protocol';
import { answerText } from '@tether/testkit';
import { describe, expect, it } from 'vitest';
import {
  SocketClient,
  completes,
  daemonPerTest,
  openEventStream,
  openSession,
  readEventsUntil,
  sseFrames,
} from './daemon-test-helpers.js';

const { start } = daemonPerTest();

describe('a turn through the daemon', () => {
  it('is sent with POST /v1/commands and watched over SSE with a streaming fetch', async () => {
    const { environment, daemon, api } = await start();
    const sessionId = await openSession(api, environment.workspace);
    const response = await openEventStream(daemon, sessionId);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const frames = sseFrames(response.body!);

    environment.api.enqueue(textReply('Hello over the daemon.', { chunks: 4 }));
    const receipt = await api.command<SubmitTurnReceipt>({
      type: 'submit_turn',
      sessionId,
      input: [{ type: 'text', text: 'Say hello.' }],
    });
    expect(receipt).toMatchObject({ type: 'submit_turn', sessionId });
    const events = await readEventsUntil(frames, completes(receipt.runId));
    await frames.return(undefined);

    expect(events[0]).toMatchObject({ type: 'session.opened', seq: 1 });
    expect(events.map((event) => event.seq)).toEqual(events.map((_, index) => index + 1));
    expect(answerText(events)).toBe('Hello over the daemon.');
    expect(events.at(-1)).toMatchObject({ type: 'run.completed', outcome: 'succeeded' });

    const snapshot = (await (await api.request('GET', `/v1/sessions/${sessionId}`)).json()) as SessionSnapshot;
    const completed = events.at(-1)!;
    expect(snapshot).toMatchObject({
      state: 'idle',
      lastSeq: completed.seq,
      title: 'Say hello.',
      lastRun: { runId: receipt.runId, outcome: 'succeeded', completedAt: completed.at },
      lastActivityAt: completed.at,
    });
    const { sessions } = (await (await api.request('GET', '/v1/sessions')).json()) as { sessions: SessionSnapshot[] };
    expect(sessions).toEqual([snapshot]);
  });

  it('is sent and watched over one WebSocket', async () => {
    const { environment, daemon, api } = await start();
    const sessionId = await openSession(api, environment.workspace);
    const socket = await SocketClient.connect(daemon);
    try {
      socket.send({ type: 'subscribe', id: 'c1', sessionId, afterSeq: 0 });
      await socket.waitFor((frame) => frame.type === 'subscribed' && frame.id === 'c1');
      environment.api.enqueue(textReply('Hello over a socket.', { chunks: 3 }));
      socket.send({
        type: 'command',
        id: 'c2',
        command: { type: 'submit_turn', commandId: 'ws-turn-1', sessionId, input: [{ type: 'text', text: 'Hi.' }] },
      });
      const receipt = await socket.waitFor((frame) => frame.id === 'c2');
      expect(receipt).toMatchObject({ type: 'receipt', receipt: { type: 'submit_turn', sessionId } });
      const runId = (receipt.receipt as SubmitTurnReceipt).runId;
      await socket.waitFor(
        (frame) => frame.type === 'event' && frame.event!.type === 'run.completed' && frame.event!.runId === runId,
      );
      const events = socket.events(sessionId);
      expect(events.map((event) => event.seq)).toEqual(events.map((_, index) => index + 1));
      expect(answerText(events)).toBe('Hello over a socket.');

      // The same commandId again: the original receipt, nothing done twice.
      socket.send({
        type: 'command',
        id: 'c3',
        command: { type: 'submit_turn', commandId: 'ws-turn-1', sessionId, input: [{ type: 'text', text: 'Hi.' }] },
      });
      expect(await socket.waitFor((frame) => frame.id === 'c3')).toMatchObject({ type: 'receipt', receipt: { runId } });

      socket.send({
        type: 'command',
        id: 'c4',
        command: {
          type: 'submit_turn',
          commandId: 'ws-turn-2',
          sessionId: 'ses_00000000000000000000000000000000',
          input: [{ type: 'text', text: 'x' }],
        },
      });
      expect(await socket.waitFor((frame) => frame.id === 'c4')).toMatchObject({
        type: 'error',
        error: { code: 'session_not_found' },
      });
      socket.send({ type: 'nonsense', id: 'c5' });
      expect(await socket.waitFor((frame) => frame.id === 'c5')).toMatchObject({
        type: 'error',
        error: { code: 'invalid_command' },
      });
      socket.send({ type: 'unsubscribe', id: 'c6', sessionId });
      expect(await socket.waitFor((frame) => frame.id === 'c6')).toMatchObject({ type: 'unsubscribed', sessionId });
    } finally {
      socket.close();
    }
  });

  it('answers subscribe and unsubscribe sent in one burst in their order, and sends no event after unsubscribed', async () => {
    const { environment, daemon, api } = await start();
    const sessionId = await openSession(api, environment.workspace);
    const socket = await SocketClient.connect(daemon);
    try {
      // The subscribe looks the session up before it registers: an unsubscribe right behind it must wait for that.
      socket.send({ type: 'subscribe', id: 's1', sessionId, afterSeq: 1 });
      socket.send({ type: 'unsubscribe', id: 'u1', sessionId });
      await socket.waitFor((frame) => frame.id === 'u1');
      expect(socket.frames.filter((frame) => frame.type !== 'ready').map((frame) => frame.id)).toEqual(['s1', 'u1']);

      environment.api.enqueue(textReply('Nobody listens on this socket.'));
      const receipt = await api.command<SubmitTurnReceipt>({
        type: 'submit_turn',
        sessionId,
        input: [{ type: 'text', text: 'Hi.' }],
      });
      // Another subscriber sees the run end: by then the unsubscribed socket would have had its events.
      const frames = sseFrames((await openEventStream(daemon, sessionId)).body!);
      await readEventsUntil(frames, completes(receipt.runId));
      await frames.return(undefined);
      // A round trip on the socket after the run ended: whatever it had queued before has arrived.
      socket.send({ type: 'unsubscribe', id: 'u2', sessionId });
      await socket.waitFor((frame) => frame.id === 'u2');
      expect(socket.frames.filter((frame) => frame.type === 'event')).toEqual([]);
    } finally {
      socket.close();
    }
  });
});
