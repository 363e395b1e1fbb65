import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { type IncomingMessage, get } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { type ConnectionState, createTetherClient } from '@tether/client';
import { type Daemon, type DaemonOptions, startDaemon } from '@tether/daemon';
import { textReply } from '@tether/fake-anthropic-api';
import type { ProtocolEvent, SubmitTurnReceipt } from '@tether/protocol';
import type { TetherStore } from '@tether/runtime';
import { openSqliteStore } from '@tether/store-sqlite';
import { answerText, createMockProvider } from '@tether/testkit';
import { describe, expect, it } from 'vitest';
import {
  RecordingLogger,
  SocketClient,
  client,
  completes,
  daemonPerTest,
  openEventStream,
  openSession,
  readEventsUntil,
  silentLogger,
  sseFrames,
} from './daemon-test-helpers.js';

const { start } = daemonPerTest();

/** A provider whose turn streams `count` deltas of `length` characters, each a block of its own (so none are joined). */
function blockPerDelta(count: number, length: number) {
  return createMockProvider({
    turn: ({ runId, emit }) => {
      for (let index = 0; index < count; index += 1)
        emit({ type: 'run.message_delta', runId, blockId: `b${index}`, text: `${index} `.padEnd(length, 'x') });
      emit({ type: 'run.completed', runId, outcome: 'succeeded' });
    },
  });
}

/**
 * A daemon over `options.providers` in a temporary folder of its own (`root`, also the sessions'
 * workspace), closed and removed once `body` is done.
 */
async function withDaemon(
  options: Pick<DaemonOptions, 'providers'> & Partial<DaemonOptions>,
  body: (daemon: Daemon, root: string) => Promise<void>,
): Promise<void> {
  const root = await realpath(await mkdtemp(path.join(os.tmpdir(), 'tether-daemon-backpressure-')));
  const daemon = await startDaemon({ dataDir: path.join(root, 'data'), port: 0, logger: silentLogger, ...options });
  try {
    await body(daemon, root);
  } finally {
    await daemon.close();
    await rm(root, { recursive: true, force: true });
  }
}

/** Submits one turn ("Go.") to the session and waits for its end; its run id. */
async function oneTurn(daemon: Daemon, sessionId: string): Promise<string> {
  const { runId } = await client(daemon).command<SubmitTurnReceipt>({
    type: 'submit_turn',
    sessionId,
    input: [{ type: 'text', text: 'Go.' }],
  });
  await daemon.runtime.waitForRun(runId);
  return runId;
}

/** An SSE request whose response is never read until the test says so: the socket stops being drained. */
function stalledStream(daemon: Daemon, sessionId: string): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    get(
      {
        host: '127.0.0.1',
        port: daemon.port,
        path: `/v1/sessions/${sessionId}/events`,
        headers: { authorization: `Bearer ${daemon.token}` },
      },
      resolve,
    ).on('error', reject);
  });
}

async function readAll(response: IncomingMessage): Promise<string> {
  response.setEncoding('utf8');
  let text = '';
  for await (const chunk of response) text += chunk as string;
  return text;
}

describe('a subscriber that does not read', () => {
  it('is cut off with event: overflow past its bound, while the session and a reading subscriber go on', async () => {
    const logger = new RecordingLogger();
    const { environment, daemon, api } = await start({ subscriberBufferBytes: 2 * 1024 * 1024, logger });
    const sessionId = await openSession(api, environment.workspace);
    // Far more than the socket buffers on both ends hold (about 4 MB on loopback) plus the 2 MiB bound,
    // in large deltas spaced out so that the reading subscriber never has much queued.
    const text = 'slow subscribers must not hold anyone up. '.repeat(280_000);
    environment.api.enqueue(textReply(text, { chunks: 160, delayMs: 5 }));

    const stalled = await stalledStream(daemon, sessionId);
    const reader = sseFrames((await openEventStream(daemon, sessionId)).body!);
    const { runId } = await api.command<SubmitTurnReceipt>({
      type: 'submit_turn',
      sessionId,
      input: [{ type: 'text', text: 'Write a lot.' }],
    });

    const read = await readEventsUntil(reader, completes(runId));
    expect(answerText(read)).toBe(text);
    expect(read.at(-1)).toMatchObject({ type: 'run.completed', outcome: 'succeeded' });
    await reader.return(undefined);
    const ended = await logger.waitFor(
      (line) => line['message'] === 'event stream ended' && line['reason'] === 'overflow',
    );

    // Now read what the stalled client was sent: a gap-free prefix, then where to resume from.
    const body = await readAll(stalled);
    const blocks = body.split('\n\n').filter((block) => block.length > 0);
    const overflow = blocks.at(-1)!;
    expect(overflow.startsWith('event: overflow\ndata: ')).toBe(true);
    const { lastSeq } = JSON.parse(overflow.slice('event: overflow\ndata: '.length)) as { lastSeq: number };
    const events = blocks
      .slice(0, -1)
      .filter((block) => block.startsWith('id: '))
      .map((block) => JSON.parse(block.split('\ndata: ')[1]!) as ProtocolEvent);
    expect(events.map((event) => event.seq)).toEqual(events.map((_, index) => index + 1));
    expect(lastSeq).toBe(events.at(-1)!.seq);
    expect(ended['lastSeq']).toBe(lastSeq);
    expect(lastSeq).toBeLessThan(read.at(-1)!.seq);

    // Resuming from lastSeq gives the rest.
    const resumed = await readEventsUntil(
      sseFrames((await openEventStream(daemon, sessionId, { lastEventId: lastSeq })).body!),
      (event) => event.type === 'run.completed',
    );
    expect(resumed[0]!.seq).toBe(lastSeq + 1);
    expect(resumed.at(-1)!.seq).toBe(read.at(-1)!.seq);
  });
});

describe('a WebSocket connection that does not read', () => {
  it('is closed with 4408 past its bound; what it got before is a gap-free prefix', async () => {
    // A burst far larger than the socket buffers: a mock agent emits it all at once.
    const burst = createMockProvider({
      turn: ({ runId, emit }) => {
        for (let index = 0; index < 200; index += 1)
          emit({ type: 'run.message_delta', runId, blockId: 'b1', text: `${index} `.padEnd(60_000, 'x') });
        emit({ type: 'run.completed', runId, outcome: 'succeeded' });
      },
    });
    const logger = new RecordingLogger();
    await withDaemon({ providers: [burst], logger, subscriberBufferBytes: 1024 * 1024 }, async (daemon, root) => {
      const api = client(daemon);
      const sessionId = await openSession(api, root);
      const socket = await SocketClient.connect(daemon);
      socket.send({ type: 'subscribe', id: 's1', sessionId, afterSeq: 0 });
      await socket.waitFor((frame) => frame.type === 'subscribed');
      socket.socket.pause();
      await api.command({ type: 'submit_turn', sessionId, input: [{ type: 'text', text: 'Burst.' }] });
      await logger.waitFor((line) => line['closeCode'] === 4408);

      socket.socket.resume();
      expect((await socket.closed).code).toBe(4408);
      const events = socket.events(sessionId);
      expect(events.length).toBeGreaterThan(0);
      expect(events.map((event) => event.seq)).toEqual(events.map((_, index) => index + 1));
      expect(events.some((event) => event.type === 'run.completed')).toBe(false);
      // The session itself went on: the run completed.
      const stored = await daemon.runtime.readEvents(sessionId, { afterSeq: 0, limit: 1000 });
      expect(stored.at(-1)).toMatchObject({ type: 'run.completed', outcome: 'succeeded' });
    });
  });
});

describe('a subscriber that replays a history larger than its bound', () => {
  it('gets all of it at its own pace, over SSE and WebSocket, without being cut off', async () => {
    // More than two replay pages of events, against a bound of ten: only a paced replay gets through.
    // A block each: deltas of one block may be joined into one event, and this needs 1,200 events.
    const long = blockPerDelta(1_200, 0);
    const logger = new RecordingLogger();
    await withDaemon({ providers: [long], logger, subscriberBufferEvents: 10 }, async (daemon, root) => {
      const api = client(daemon);
      const sessionId = await openSession(api, root);
      const runId = await oneTurn(daemon, sessionId);
      const stored = await readEventsUntil(
        sseFrames((await openEventStream(daemon, sessionId)).body!),
        completes(runId),
      );
      const lastSeq = stored.at(-1)!.seq;
      expect(stored.map((event) => event.seq)).toEqual(Array.from({ length: lastSeq }, (_, index) => index + 1));
      expect(lastSeq).toBeGreaterThan(1_200);

      const socket = await SocketClient.connect(daemon);
      socket.send({ type: 'subscribe', id: 's1', sessionId, afterSeq: 0 });
      await socket.waitFor((frame) => frame.type === 'event' && frame.event!.seq === lastSeq);
      expect(socket.events(sessionId)).toEqual(stored);
      socket.close();
      expect(logger.lines.filter((line) => line['reason'] === 'overflow' || line['closeCode'] === 4408)).toEqual([]);
    });
  });
});

describe('a WebSocket that reads a long history slowly', () => {
  it('is not taken for dead while it reads: its ping waits behind the events, and it gets the whole history', async () => {
    // 200 events of 60 KB (12 MB): far more than the loopback buffers hold ahead of a ping.
    const long = blockPerDelta(200, 60_000);
    const logger = new RecordingLogger();
    let trickle: NodeJS.Timeout | undefined;
    await withDaemon({ providers: [long], logger, pingIntervalMs: 400 }, async (daemon, root) => {
      const sessionId = await openSession(client(daemon), root);
      await oneTurn(daemon, sessionId);
      const socket = await SocketClient.connect(daemon);
      // A slow link: after each message the reader rests 20 ms (60 KB at a time, ~3 MB/s), so a ping
      // reaches it seconds after it was sent, behind the megabytes the socket buffers hold.
      socket.socket.on('message', () => {
        socket.socket.pause();
        trickle = setTimeout(() => socket.socket.resume(), 20);
      });
      socket.send({ type: 'subscribe', id: 's1', sessionId, afterSeq: 0 });
      const last = await socket.waitFor((frame) => frame.type === 'event' && frame.event!.type === 'run.completed');
      const events = socket.events(sessionId);
      expect(events.map((event) => event.seq)).toEqual(
        Array.from({ length: last.event!.seq }, (_, index) => index + 1),
      );
      expect(logger.lines.filter((line) => String(line['msg'] ?? '').includes('no answer to a ping'))).toEqual([]);
      socket.close();
    }).finally(() => clearTimeout(trickle));
  });
});

/**
 * The store, with a way to learn when a subscriber's paced replay read its first page: from there the
 * daemon fills the subscriber's outbox in one go (no I/O in between), so a frame the client sends
 * once it is told arrives at a full outbox.
 */
function storeTellingReplays(store: TetherStore): {
  store: TetherStore;
  firstPageRead: (sessionId: string) => Promise<void>;
} {
  const waiting = new Map<string, () => void>();
  const watched = new Proxy(store, {
    get(target, property) {
      const value = Reflect.get(target, property, target) as unknown;
      if (property !== 'readEvents') return typeof value === 'function' ? value.bind(target) : value;
      return async (sessionId: string, options: Parameters<TetherStore['readEvents']>[1]) => {
        const page = await target.readEvents(sessionId, options);
        if (options.afterSeq === 0 && page.length > 0) waiting.get(sessionId)?.();
        return page;
      };
    },
  });
  return {
    store: watched,
    firstPageRead: (sessionId) => new Promise((resolve) => waiting.set(sessionId, resolve)),
  };
}

describe('a WebSocket that pauses while a long history replays', () => {
  /** A daemon whose session holds a history far larger than the socket buffers, and a socket that stopped reading while it replays. */
  async function pausedDuringReplay(root: string) {
    // 400 events of 60 KB (25 MB): more than the loopback buffers hold, so the replay waits on the outbox.
    const long = blockPerDelta(400, 60_000);
    let watched: ReturnType<typeof storeTellingReplays> | undefined;
    const logger = new RecordingLogger();
    const daemon = await startDaemon({
      dataDir: path.join(root, 'data'),
      port: 0,
      providers: [long],
      logger,
      // The count is the bound that binds: the outbox holds four of these events at most.
      subscriberBufferEvents: 4,
      openStore: async (dataDir) => {
        watched = storeTellingReplays(await openSqliteStore({ dataDir }));
        return watched.store;
      },
    });
    const api = client(daemon);
    const sessionId = await openSession(api, root);
    const { runId } = await api.command<SubmitTurnReceipt>({
      type: 'submit_turn',
      sessionId,
      input: [{ type: 'text', text: 'Go.' }],
    });
    await daemon.runtime.waitForRun(runId);
    const socket = await SocketClient.connect(daemon);
    socket.socket.pause();
    const replaying = watched!.firstPageRead(sessionId);
    socket.send({ type: 'subscribe', id: 's1', sessionId, afterSeq: 0 });
    await replaying;
    return { daemon, api, logger, socket, sessionId };
  }

  it('still gets the answer to a command it sends meanwhile, and the rest of the history once it reads again', async () => {
    const root = await realpath(await mkdtemp(path.join(os.tmpdir(), 'tether-daemon-ws-replay-')));
    const { daemon, logger, socket, sessionId } = await pausedDuringReplay(root);
    try {
      socket.send({
        type: 'command',
        id: 'c1',
        command: { type: 'open_session', commandId: 'paused-reader-1', workspace: { kind: 'directory', path: root } },
      });
      socket.socket.resume();
      const answer = await socket.waitFor((frame) => frame.id === 'c1');
      expect(answer.type).toBe('receipt');
      const last = await socket.waitFor((frame) => frame.type === 'event' && frame.event!.type === 'run.completed');
      const events = socket.events(sessionId);
      expect(events.map((event) => event.seq)).toEqual(
        Array.from({ length: last.event!.seq }, (_, index) => index + 1),
      );
      expect(logger.lines.filter((line) => line['closeCode'] === 4408)).toEqual([]);
      socket.close();
    } finally {
      await daemon.close();
      await rm(root, { recursive: true, force: true });
    }
  });

  it('gets no event of a subscription after its unsubscribed, nor twice after subscribing again', async () => {
    const root = await realpath(await mkdtemp(path.join(os.tmpdir(), 'tether-daemon-ws-replay-')));
    const { daemon, socket, sessionId } = await pausedDuringReplay(root);
    try {
      socket.send({ type: 'unsubscribe', id: 'u1', sessionId });
      socket.send({ type: 'subscribe', id: 's2', sessionId, afterSeq: 0 });
      socket.socket.resume();
      await socket.waitFor((frame) => frame.type === 'event' && frame.event!.type === 'run.completed');
      const kinds = socket.frames.map((frame) => (frame.type === 'event' ? frame.event!.seq : frame.type));
      const unsubscribed = kinds.indexOf('unsubscribed');
      const subscribedAgain = kinds.lastIndexOf('subscribed');
      expect(unsubscribed).toBeGreaterThan(0);
      // Between the unsubscribed and the new subscribed, nothing; after it, the whole history once, in order.
      expect(subscribedAgain).toBe(unsubscribed + 1);
      const again = kinds.slice(subscribedAgain + 1);
      expect(again).toEqual(Array.from({ length: again.length }, (_, index) => index + 1));
      socket.close();
    } finally {
      await daemon.close();
      await rm(root, { recursive: true, force: true });
    }
  });
});

describe('many WebSockets that do not read', () => {
  it('share the bytes of each event they hold, as event streams do, instead of a copy each', async () => {
    // About 9 MB of events, under each socket's bound (16 MiB): every paused socket holds what the loopback does not.
    const burst = blockPerDelta(150, 60_000);
    await withDaemon({ providers: [burst] }, async (daemon, root) => {
      const sockets: SocketClient[] = [];
      try {
        const api = client(daemon);
        const sessionId = await openSession(api, root);
        for (let index = 0; index < 20; index += 1) {
          const socket = await SocketClient.connect(daemon);
          socket.send({ type: 'subscribe', id: 's1', sessionId, afterSeq: 0 });
          await socket.waitFor((frame) => frame.type === 'subscribed');
          socket.socket.pause();
          sockets.push(socket);
        }
        const before = process.memoryUsage().arrayBuffers;
        const { runId } = await api.command<SubmitTurnReceipt>({
          type: 'submit_turn',
          sessionId,
          input: [{ type: 'text', text: 'Burst.' }],
        });
        await daemon.runtime.waitForRun(runId);
        // Each event is handed to every socket as it is published: by now every paused socket holds the burst.
        const held = process.memoryUsage().arrayBuffers - before;
        // A copy per socket would be 20 × 9 MB less what the loopback took; shared, about one burst.
        expect(held).toBeLessThan(60 * 1024 * 1024);
        for (const socket of sockets) socket.socket.resume();
        await Promise.all(sockets.map((socket) => socket.waitFor((frame) => frame.event?.type === 'run.completed')));
      } finally {
        // Before the daemon closes: it would otherwise wait on paused sockets.
        for (const socket of sockets) socket.close();
      }
    });
  });
});

describe('@tether/client cut off for falling behind', () => {
  it('reconnects and yields every event once, in order, even with maxAttempts 0 (no attempt failed)', async () => {
    // 300 events published at once against a bound of 20: every subscriber overflows, however fast it reads.
    await withDaemon({ providers: [blockPerDelta(300, 200)], subscriberBufferEvents: 20 }, async (daemon, root) => {
      const api = client(daemon);
      const sessionId = await openSession(api, root);
      const tether = createTetherClient({ url: daemon.url, token: daemon.token, reconnect: { maxAttempts: 0 } });
      const states: ConnectionState[] = [];
      const events = tether
        .subscribe(sessionId, { onConnectionChange: (state) => states.push(state) })
        [Symbol.asyncIterator]();
      expect((await events.next()).value).toMatchObject({ seq: 1 });
      const runId = await oneTurn(daemon, sessionId);
      const stored = await daemon.runtime.readEvents(sessionId, { afterSeq: 0, limit: 1000 });
      const seen: ProtocolEvent[] = [stored[0]!];
      while (seen.at(-1)!.seq < stored.at(-1)!.seq) seen.push((await events.next()).value as ProtocolEvent);
      await events.return?.();
      expect(seen).toEqual(stored);
      expect(seen.at(-1)).toMatchObject({ type: 'run.completed', runId });
      // It was cut off (and came back) at least once.
      expect(states.filter((state) => state === 'reconnecting').length).toBeGreaterThanOrEqual(1);
    });
  });
});
