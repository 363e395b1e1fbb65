import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { useTestPostgres } from '@tether/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type SseFrame,
  SocketClient,
  client,
  openEventStream,
  openSession,
  readEventsUntil,
  silentLogger,
  sseFrames,
} from '../daemon/daemon-test-helpers.js';
import { InProcessDaemons } from './in-process-daemons.js';

// Two daemons in this process on one PostgreSQL database, their agents mocked: what a client of
// each sees of a session deleted through the other.
const server = useTestPostgres();

const daemons = new InProcessDaemons();
const sockets: SocketClient[] = [];
let root = '';

afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.close();
  await daemons.closeAll();
});

const serve = (database: string, name: string) => daemons.serve({ root, database, name, logger: silentLogger });

/** Resolves once the stream has ended (pings skipped); fails if an event comes first. */
async function ended(frames: AsyncGenerator<SseFrame>, where: string): Promise<void> {
  for (let next = await frames.next(); !next.done; next = await frames.next())
    if (next.value.comment === undefined) throw new Error(`the stream on ${where} sent ${JSON.stringify(next.value)}`);
}

describe('a session deleted through one of two daemons sharing a database', () => {
  it('ends its event streams and WebSocket subscriptions on both daemons, not only on the one that deleted it', async () => {
    root = await daemons.temporaryRoot('tether-deleted-streams-');
    const workspace = path.join(root, 'workspace');
    await mkdir(workspace);
    const database = await server().createDatabase();
    const a = await serve(database, 'a');
    const b = await serve(database, 'b');
    const apiA = client(a);
    const sessionId = await openSession(apiA, workspace);
    await apiA.command({ type: 'close_session', sessionId });

    const [atA, atB] = await Promise.all(
      [a, b].map(async (daemon) => {
        const frames = sseFrames((await openEventStream(daemon, sessionId)).body!);
        await readEventsUntil(frames, (event) => event.type === 'session.closed');
        return frames;
      }),
    );
    const socketAtB = await SocketClient.connect(b);
    sockets.push(socketAtB);
    socketAtB.send({ type: 'subscribe', id: 'follow', sessionId });
    await socketAtB.waitFor((frame) => frame.type === 'event' && frame.event?.type === 'session.closed');

    expect((await apiA.request('DELETE', `/v1/sessions/${sessionId}`)).status).toBe(200);
    await ended(atA!, 'A');
    await ended(atB!, 'B');
    await socketAtB.waitFor((frame) => frame.type === 'unsubscribed' && frame.sessionId === sessionId);
    expect(socketAtB.frames.filter((frame) => frame.type === 'unsubscribed')).toEqual([
      { type: 'unsubscribed', id: null, sessionId },
    ]);
    expect((await client(b).request('GET', `/v1/sessions/${sessionId}`)).status).toBe(404);
  });
});
