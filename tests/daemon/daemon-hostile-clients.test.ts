// What a local process without the token can do to the daemon: every defence of docs/security.md's
// "Who can reach the port" table against a real daemon.
import { type ChildProcess, execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { type Socket, connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { promisify } from 'node:util';
import { WebSocket } from 'ws';
import {
  RecordingLogger,
  SocketClient,
  client,
  daemonPerTest,
  openEventStream,
  openSession,
  spawnDaemonChild,
} from './daemon-test-helpers.js';

const execFileAsync = promisify(execFile);
const fixture = daemonPerTest();
const { start } = fixture;
let child: ChildProcess | undefined;
const rawSockets: Socket[] = [];

afterEach(() => {
  if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  child = undefined;
  for (const socket of rawSockets.splice(0)) socket.destroy();
});

const mebibyte = 1024 * 1024;

function residentBytes(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((entry) => entry.startsWith('VmRSS:'));
  return Number(/(\d+)/.exec(line!)![1]) * 1024;
}

function openRawSocket(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port }, () => resolve(socket));
    socket.once('error', reject);
    rawSockets.push(socket);
  });
}

/**
 * Upgrades a raw connection to /v1/ws and, without any auth frame, starts one text frame that
 * declares `declaredBytes` and streams zeros for it until the daemon answers with a close frame.
 * Returns the close code (null if the connection ended without one) and how much was written.
 */
async function sendUnauthenticatedFrame(
  url: string,
  declaredBytes: number,
): Promise<{ closeCode: number | null; written: number }> {
  const { port } = new URL(url);
  const socket = await openRawSocket(Number(port));
  let received = Buffer.alloc(0);
  let closed = false;
  const wake: Array<() => void> = [];
  const notify = () => wake.splice(0).forEach((resolve) => resolve());
  socket.on('data', (chunk: Buffer) => {
    received = Buffer.concat([received, chunk]);
    notify();
  });
  socket.on('drain', notify);
  socket.on('close', () => {
    closed = true;
    notify();
  });
  socket.on('error', () => undefined);
  const until = async (condition: () => boolean) => {
    while (!condition() && !closed) await new Promise<void>((resolve) => wake.push(resolve));
  };
  socket.write(
    `GET /v1/ws HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`,
  );
  await until(() => received.includes('\r\n\r\n'));
  const headEnd = received.indexOf('\r\n\r\n') + 4;
  expect(received.subarray(0, headEnd).toString()).toMatch(/^HTTP\/1\.1 101 /);
  const frames = () => received.subarray(headEnd);

  // FIN + text, masked (a client must mask; a zero key leaves the zeros as they are), 64-bit length.
  const header = Buffer.alloc(14);
  header[0] = 0x81;
  header[1] = 0x80 | 127;
  header.writeBigUInt64BE(BigInt(declaredBytes), 2);
  socket.write(header);
  const chunk = Buffer.alloc(mebibyte);
  let written = 0;
  while (written < declaredBytes && frames().length === 0 && !closed) {
    written += chunk.length;
    if (!socket.write(chunk)) await until(() => socket.writableLength === 0);
  }
  await until(() => frames().length >= 4);
  socket.destroy();
  const reply = frames();
  // A close frame (opcode 8) carries its status code in its first two payload bytes.
  return { closeCode: reply.length >= 4 && reply[0] === 0x88 ? reply.readUInt16BE(2) : null, written };
}

function rawRequest(
  port: number,
  options: { path: string; method: string; headers: Record<string, string>; chunks?: (string | Buffer)[] },
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      { host: '127.0.0.1', port, path: options.path, method: options.method, headers: options.headers },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (part: string) => (body += part));
        response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body }));
      },
    );
    request.on('error', reject);
    for (const part of options.chunks ?? []) request.write(part);
    request.end();
  });
}

describe('a WebSocket before its auth frame', () => {
  it('may send one small frame: an oversized one is closed with 1009 at its header, and the daemon does not buffer it', async () => {
    const environment = await fixture.environment();
    const daemon = await spawnDaemonChild(environment);
    child = daemon.child;
    const before = residentBytes(daemon.pid);
    // The attack of issue 18: five sockets, each starting a 60 MiB frame instead of authenticating.
    const attempts = await Promise.all(
      Array.from({ length: 5 }, () => sendUnauthenticatedFrame(daemon.url, 60 * mebibyte)),
    );
    const after = residentBytes(daemon.pid);
    console.info(
      `daemon RSS before ${(before / mebibyte).toFixed(1)} MiB, after five unauthenticated 60 MiB frames ${(after / mebibyte).toFixed(1)} MiB`,
    );
    for (const attempt of attempts) expect(attempt.closeCode).toBe(1009);
    // Buffering even one of the frames would add 60 MiB; the five together used to add ~600 MB.
    expect(after - before).toBeLessThan(60 * mebibyte);
    // The daemon still serves its token holder.
    expect((await client(daemon).request('GET', '/v1/sessions')).status).toBe(200);
  });

  it('after auth, frames up to the command limit go through', async () => {
    const { daemon } = await start();
    const socket = await SocketClient.connect(daemon);
    // Far past the pre-auth limit: the command is refused by validation, not by the frame limit.
    socket.send({
      type: 'command',
      id: 'big',
      command: {
        type: 'submit_turn',
        commandId: 'c-big',
        sessionId: 'ses_00000000000000000000000000000000',
        input: [{ type: 'text', text: 'x'.repeat(200_000) }],
      },
    });
    const answer = await socket.waitFor((frame) => frame.id === 'big');
    expect(answer).toMatchObject({ type: 'error', error: { code: 'session_not_found' } });
    socket.close();
  });

  it('a malformed frame of a known type is refused naming the fields it got wrong; an unknown one is refused as such', async () => {
    const { daemon } = await start();
    const socket = await SocketClient.connect(daemon);
    const sessionId = 'ses_00000000000000000000000000000000';
    socket.send({ type: 'subscribe', id: 'extra-field', sessionId, afterSeq: 0, from: 3 });
    expect(await socket.waitFor((frame) => frame.id === 'extra-field')).toMatchObject({
      type: 'error',
      error: {
        code: 'invalid_command',
        message: expect.stringMatching(/^The subscribe frame is not valid \(\(frame\): .*\)\. Fix those fields\./),
        details: { reason: 'invalid_frame' },
      },
    });
    // Where a subscribe reads is refused as an event stream (SSE) or readEvents refuses it: the same reasons.
    for (const [id, afterSeq] of [
      ['string-seq', '3'],
      ['negative-seq', -1],
      ['fraction-seq', 1.5],
      ['huge-seq', 1e20],
    ] as const) {
      socket.send({ type: 'subscribe', id, sessionId, afterSeq });
      expect(await socket.waitFor((frame) => frame.id === id)).toMatchObject({
        type: 'error',
        error: { code: 'invalid_command', details: { reason: 'invalid_start_seq' } },
      });
    }
    socket.send({ type: 'subscribe', id: 'numeric-session', sessionId: 42 });
    expect(await socket.waitFor((frame) => frame.id === 'numeric-session')).toMatchObject({
      error: { code: 'invalid_command', details: { reason: 'invalid_session_id' } },
    });
    socket.send({ type: 'subscribe', id: 'malformed-session', sessionId: 'ses_bad', afterSeq: 0 });
    expect(await socket.waitFor((frame) => frame.id === 'malformed-session')).toMatchObject({
      error: { code: 'session_not_found' },
    });
    socket.send({ type: 'command', id: 'no-command' });
    expect(await socket.waitFor((frame) => frame.id === 'no-command')).toMatchObject({
      error: {
        message: expect.stringContaining('command: the command object ({type, commandId, …})'),
        details: { reason: 'invalid_frame', issues: [{ path: 'command' }] },
      },
    });
    socket.send({ type: 'publish', id: 'unknown' });
    expect(await socket.waitFor((frame) => frame.id === 'unknown')).toMatchObject({
      error: { code: 'invalid_command', message: expect.stringContaining('Unknown or malformed frame.') },
    });
    // A second auth frame is told as such, not as an unknown frame.
    socket.send({ type: 'auth', id: 'again', token: 'whatever' });
    expect(await socket.waitFor((frame) => frame.id === 'again')).toMatchObject({
      error: { code: 'invalid_command', message: expect.stringContaining('This socket is already authenticated') },
    });
    socket.close();
  });

  it('only a few sockets may wait unauthenticated at once: the next upgrade gets 503 with the usual headers', async () => {
    const { daemon } = await start();
    const waiting: SocketClient[] = [];
    type Refusal = { status: number; headers: Record<string, string | string[] | undefined> };
    let refusal: Refusal | undefined;
    while (refusal === undefined && waiting.length < 100) {
      const socket = new SocketClient(daemon.url);
      refusal = await new Promise<Refusal | undefined>((resolve) => {
        socket.socket.once('open', () => resolve(undefined));
        socket.socket.once('unexpected-response', (_request, response) =>
          resolve({ status: response.statusCode!, headers: response.headers }),
        );
        socket.socket.on('error', () => undefined);
      });
      if (refusal === undefined) waiting.push(socket);
    }
    expect(refusal?.status).toBe(503);
    expect(refusal?.headers['retry-after']).toBe('5');
    expect(refusal?.headers['x-frame-options']).toBe('DENY');
    expect(waiting.length).toBeGreaterThan(0);
    expect(waiting.length).toBeLessThan(100);
    // One of them authenticates: its place goes to the next client.
    waiting[0]!.send({ type: 'auth', token: daemon.token });
    await waiting[0]!.waitFor((frame) => frame.type === 'ready');
    const next = await SocketClient.connect(daemon);
    next.close();
    for (const socket of waiting) socket.close();
  });
});

describe('request bodies', () => {
  it('a chunked, an empty, a malformed and an oversized body get 400 or 413 with a typed error, never 500', async () => {
    const { daemon } = await start();
    const headers = {
      host: `127.0.0.1:${daemon.port}`,
      authorization: `Bearer ${daemon.token}`,
      'content-type': 'application/json',
    };
    const chunked = await rawRequest(daemon.port, {
      path: '/v1/commands',
      method: 'POST',
      headers: { ...headers, 'transfer-encoding': 'chunked' },
      chunks: ['{"type":"close_session",', '"commandId":"c1","sessionId":"ses_00000000000000000000000000000000"}'],
    });
    expect(chunked.status).toBe(404);
    expect(JSON.parse(chunked.body)).toMatchObject({ error: { code: 'session_not_found' } });

    const empty = await rawRequest(daemon.port, {
      path: '/v1/commands',
      method: 'POST',
      headers: { ...headers, 'content-length': '0' },
    });
    expect(empty.status).toBe(400);
    expect(JSON.parse(empty.body)).toMatchObject({
      error: { code: 'invalid_command', details: { reason: 'empty_body' } },
    });
    const emptyChunked = await rawRequest(daemon.port, {
      path: '/v1/commands',
      method: 'POST',
      headers: { ...headers, 'transfer-encoding': 'chunked' },
    });
    expect(emptyChunked.status).toBe(400);

    const malformed = await rawRequest(daemon.port, {
      path: '/v1/commands',
      method: 'POST',
      headers: { ...headers, 'transfer-encoding': 'chunked' },
      chunks: ['{"type":', 'nope'],
    });
    expect(malformed.status).toBe(400);
    expect(JSON.parse(malformed.body)).toMatchObject({
      error: { code: 'invalid_command', details: { reason: 'malformed_json' } },
    });

    // Bytes that are not UTF-8 are refused, not stored as U+FFFD; a byte-order mark before the JSON is let be.
    const latin1 = await rawRequest(daemon.port, {
      path: '/v1/commands',
      method: 'POST',
      headers: { ...headers, 'transfer-encoding': 'chunked' },
      chunks: [
        Buffer.from(
          '{"type":"open_session","commandId":"caf\xe9","workspace":{"kind":"directory","path":"/tmp"}}',
          'latin1',
        ),
      ],
    });
    expect(latin1.status).toBe(400);
    expect(JSON.parse(latin1.body)).toMatchObject({
      error: { code: 'invalid_command', message: expect.stringContaining('not valid UTF-8') },
    });
    const withMark = await rawRequest(daemon.port, {
      path: '/v1/commands',
      method: 'POST',
      headers: { ...headers, 'transfer-encoding': 'chunked' },
      chunks: ['\ufeff{"type":"nope"}'],
    });
    expect(JSON.parse(withMark.body)).not.toMatchObject({ error: { details: { reason: 'malformed_json' } } });

    const declaredTooLarge = await rawRequest(daemon.port, {
      path: '/v1/commands',
      method: 'POST',
      headers: { ...headers, 'content-length': String(65 * mebibyte) },
    });
    expect(declaredTooLarge.status).toBe(413);
    // Its body is not kept, so the connection is not kept for another request either.
    expect(declaredTooLarge.headers.connection).toBe('close');
    expect(JSON.parse(declaredTooLarge.body)).toMatchObject({ error: { code: 'payload_too_large' } });
    // Chunked, the size is known only as it arrives: refused once it passes the limit.
    const piece = 'x'.repeat(mebibyte);
    const chunkedTooLarge = await rawRequest(daemon.port, {
      path: '/v1/commands',
      method: 'POST',
      headers: { ...headers, 'transfer-encoding': 'chunked' },
      chunks: ['{"text":"', ...Array.from({ length: 65 }, () => piece)],
    });
    expect(chunkedTooLarge.status).toBe(413);
    expect((await fetch(`${daemon.url}/health`)).status).toBe(200);
  });

  it('a client still sending an oversized body it declared reads the 413, not a reset connection, every time', async () => {
    const { daemon } = await start();
    // The client in a process of its own, as a client on another machine would be: it is still
    // sending when the daemon answers, and prints the status it read, or the error that replaced it.
    const sender = `
      fetch(process.argv[1], {
        method: 'POST',
        headers: { authorization: 'Bearer ${daemon.token}', 'content-type': 'application/json' },
        body: Buffer.alloc(${70 * mebibyte}, 0x20),
      }).then((response) => console.log(response.status), (error) => console.log(error.cause?.code ?? error.message));`;
    for (let attempt = 1; attempt <= 3; attempt++) {
      const { stdout } = await execFileAsync(process.execPath, ['-e', sender, `${daemon.url}/v1/commands`]);
      expect(stdout.trim().split('\n')[0], `attempt ${attempt}`).toBe('413');
    }
  });
});

describe('a body cut off', () => {
  it('by a client that goes away half-way is a typed client error in the log and the metrics, not a 500', async () => {
    const logger = new RecordingLogger();
    const { daemon, api } = await start({ logger });
    const socket = await openRawSocket(daemon.port);
    socket.write(
      `POST /v1/commands HTTP/1.1\r\nHost: 127.0.0.1:${daemon.port}\r\nAuthorization: Bearer ${daemon.token}\r\n` +
        'Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"type":"open_session",',
    );
    await new Promise<void>((resolve) => socket.end(() => resolve()));
    socket.destroy();
    const line = await logger.waitFor((entry) => entry['route'] === '/v1/commands');
    expect(line).toMatchObject({ status: 400, errorCode: 'invalid_command' });
    expect(logger.lines.filter((entry) => entry.message === 'unexpected error')).toEqual([]);
    const metrics = await (await api.request('GET', '/v1/metrics')).text();
    expect(metrics).toContain('tether_http_requests_total{route="/v1/commands",status="400"} 1');
    expect(metrics).not.toContain('status="500"');
  });
});

describe('idle connections', () => {
  it('a connection that sends nothing is closed after the idle timeout', async () => {
    const { daemon } = await start({ idleTimeoutMs: 500, pingIntervalMs: 200 });
    const socket = await openRawSocket(daemon.port);
    await new Promise((resolve) => socket.once('close', resolve));
    expect(socket.destroyed).toBe(true);
  });

  it('with the connection cap filled by idle sockets, /health and the API still answer', async () => {
    const { daemon, api } = await start({ maxConnections: 20 });
    const idle = await Promise.all(Array.from({ length: 40 }, () => openRawSocket(daemon.port)));
    let closed = 0;
    const twentyClosed = new Promise<void>((resolve) => {
      for (const socket of idle) socket.once('close', () => ++closed === 20 && resolve());
    });
    expect((await fetch(`${daemon.url}/health`)).status).toBe(200);
    expect((await api.request('GET', '/v1/sessions')).status).toBe(200);
    // The idle sockets made room: at least the 20 past the cap are gone.
    await twentyClosed;
    expect(closed).toBeGreaterThanOrEqual(20);
  });
});

describe('a token holder that opens a stream per session and never lets go', () => {
  it('streams and sockets take at most 80% of the connections; past it 429 capacity_exceeded, and requests still get through', async () => {
    const { environment, daemon, api } = await start({ maxConnections: 20 });
    const sessionId = await openSession(api, environment.workspace);
    const streams = Array.from({ length: 16 }, () => new AbortController());
    for (const stream of streams) await openEventStream(daemon, sessionId, { signal: stream.signal });

    const refused = await fetch(`${daemon.url}/v1/sessions/${sessionId}/events`, {
      headers: { authorization: `Bearer ${daemon.token}` },
    });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('5');
    const body = (await refused.json()) as { error: { code: string; message: string; details: { reason: string } } };
    expect(body.error).toMatchObject({ code: 'capacity_exceeded', details: { reason: 'too_many_streams' } });
    expect(body.error.message).toContain('16 event streams and WebSockets');
    const socketRefusal = await new Promise<number>((resolve, reject) => {
      const socket = new WebSocket(`${daemon.url.replace('http', 'ws')}/v1/ws`);
      socket.once('unexpected-response', (_request, response) => resolve(response.statusCode ?? 0));
      socket.once('open', () => reject(new Error('the socket was taken')));
      socket.once('error', () => undefined);
    });
    expect(socketRefusal).toBe(429);
    expect((await fetch(`${daemon.url}/health`)).status).toBe(200);
    expect((await api.request('GET', `/v1/sessions/${sessionId}`)).status).toBe(200);

    streams[0]!.abort();
    await expect
      .poll(async () => {
        const again = await fetch(`${daemon.url}/v1/sessions/${sessionId}/events`, {
          method: 'HEAD',
          headers: { authorization: `Bearer ${daemon.token}` },
        });
        return again.status;
      })
      .toBe(200);
    for (const stream of streams) stream.abort();
  });
});

describe('answers written outside the HTTP middleware', () => {
  it('an event stream carries the security headers, and CORS for an allowed origin', async () => {
    const { environment, daemon, api } = await start({ allowOrigins: ['http://localhost:5173'] });
    const sessionId = await openSession(api, environment.workspace);
    const controller = new AbortController();
    const stream = await openEventStream(daemon, sessionId, { signal: controller.signal });
    expect(stream.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect(stream.headers.get('x-frame-options')).toBe('DENY');
    expect(stream.headers.get('access-control-allow-origin')).toBeNull();
    controller.abort();

    const fromAllowed = new AbortController();
    const allowed = await fetch(`${daemon.url}/v1/sessions/${sessionId}/events`, {
      headers: { authorization: `Bearer ${daemon.token}`, origin: 'http://localhost:5173' },
      signal: fromAllowed.signal,
    });
    expect(allowed.status).toBe(200);
    expect(allowed.headers.get('access-control-allow-origin')).toBe('http://localhost:5173');
    expect(allowed.headers.get('referrer-policy')).toBe('no-referrer');
    fromAllowed.abort();
  });

  it('a refused upgrade carries the security headers', async () => {
    const { daemon } = await start();
    const refused = await new Promise<{ status: number; headers: Record<string, string | string[] | undefined> }>(
      (resolve) => {
        const socket = new WebSocket(`${daemon.url.replace('http', 'ws')}/v1/elsewhere`);
        socket.on('unexpected-response', (_request, response) =>
          resolve({ status: response.statusCode!, headers: response.headers }),
        );
        socket.on('error', () => undefined);
      },
    );
    expect(refused.status).toBe(404);
    expect(refused.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(refused.headers['x-content-type-options']).toBe('nosniff');
  });
});
