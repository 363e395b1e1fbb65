import { describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { statusWithHost, useTestDaemon } from '../test-daemon.test-helper.js';
import { maxUnauthenticatedSockets } from '../websocket/websocket-upgrade.js';

const startTestDaemon = useTestDaemon();

describe("the daemon's log of requests without a valid token", () => {
  it('writes the first refusal, then one line counting the rest, with no token or path in it', async () => {
    const { daemon, lines } = await startTestDaemon();
    const badToken = `${daemon.token}-WRONG`;
    for (let index = 0; index < 100; index += 1) {
      const response = await fetch(`${daemon.url}/v1/sessions/secret-path-${index}?also=secret-query`, {
        headers: { authorization: `Bearer ${badToken}` },
      });
      expect(response.status).toBe(401);
    }
    // A request with the token is logged as ever.
    const allowed = await fetch(`${daemon.url}/v1/sessions`, { headers: { authorization: `Bearer ${daemon.token}` } });
    expect(allowed.status).toBe(200);
    // The count of the refusals held back is written at shutdown at the latest.
    await daemon.close();

    const refusals = lines.filter((line) => line.fields['status'] === 401);
    expect(refusals).toEqual([
      {
        level: 'info',
        fields: expect.objectContaining({ status: 401, route: '/v1/sessions/:id', errorCode: 'unauthorized' }),
        message: 'request',
      },
      {
        level: 'warn',
        fields: {
          status: 401,
          errorCode: 'unauthorized',
          refusal: 'unauthorized',
          refused: 99,
          since: expect.any(String),
          until: expect.any(String),
        },
        message: expect.stringContaining('requests refused without a valid token (401): 99 more'),
      },
    ]);
    expect(lines.some((line) => line.fields['status'] === 200 && line.fields['route'] === '/v1/sessions')).toBe(true);
    const written = JSON.stringify(lines);
    expect(written).not.toContain(badToken);
    expect(written).not.toContain('secret-path');
    expect(written).not.toContain('secret-query');
  });
});

describe("the daemon's log of what anyone may ask without the token", () => {
  it('a flood of health checks writes nothing at the default level', async () => {
    const { daemon, lines } = await startTestDaemon();
    for (let index = 0; index < 100; index += 1) {
      expect((await fetch(`${daemon.url}/health`)).status).toBe(200);
      // Nor with a method the path does not take: counted, written once.
      expect((await fetch(`${daemon.url}/health`, { method: 'DELETE' })).status).toBe(405);
    }
    await daemon.close();
    expect(lines.filter((line) => line.fields['route'] === '/health' && line.level !== 'debug')).toEqual([]);
    expect(lines.filter((line) => line.fields['status'] === 405)).toEqual([
      expect.objectContaining({ level: 'info', message: 'request' }),
      expect.objectContaining({ level: 'warn', fields: expect.objectContaining({ refused: 99 }) }),
    ]);
  });
});

/** The HTTP status a WebSocket upgrade was refused with. */
function refusedUpgrade(url: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, { headers });
    socket.on('unexpected-response', (_request, response) => {
      response.resume();
      resolve(response.statusCode!);
    });
    socket.on('open', () => reject(new Error('the upgrade was taken')));
    socket.on('error', () => undefined);
  });
}

/** An open socket that has not shown the token yet. */
function openSocket(url: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url);
    socket.on('open', () => resolve(socket));
    socket.on('error', reject);
  });
}

/** The close code of a socket that sent `frame` as its first frame. */
async function closeCodeAfter(url: string, frame: string): Promise<number> {
  const socket = await openSocket(url);
  const closed = new Promise<number>((resolve) => socket.on('close', (code) => resolve(code)));
  socket.send(frame);
  return closed;
}

describe("the daemon's log of requests for paths no route answers", () => {
  it('writes the first, then one line counting the rest; a route that answers 404 is logged as ever', async () => {
    const { daemon, lines } = await startTestDaemon();
    const times = 30;
    for (let index = 0; index < times; index += 1) {
      const response = await fetch(`${daemon.url}/probe-${index}/secret-path?also=secret-query`);
      expect(response.status).toBe(404);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe('route_not_found');
    }
    // An unknown session is the answer of a route that exists: a line of its own, as ever.
    const unknown = await fetch(`${daemon.url}/v1/sessions/no-such-session`, {
      headers: { authorization: `Bearer ${daemon.token}` },
    });
    expect(unknown.status).toBe(404);
    await daemon.close();

    expect(lines.filter((line) => line.fields['errorCode'] === 'route_not_found')).toEqual([
      {
        level: 'info',
        fields: expect.objectContaining({ status: 404, route: 'unmatched', errorCode: 'route_not_found' }),
        message: 'request',
      },
      {
        level: 'warn',
        fields: expect.objectContaining({ status: 404, refusal: 'route_not_found', refused: times - 1 }),
        message: expect.stringContaining(`requests for a path no route answers (404): ${times - 1} more,`),
      },
    ]);
    expect(
      lines.filter((line) => line.fields['route'] === '/v1/sessions/:id' && line.fields['status'] === 404),
    ).toHaveLength(1);
    const written = JSON.stringify(lines);
    expect(written).not.toContain('probe-');
    expect(written).not.toContain('secret-path');
    expect(written).not.toContain('secret-query');
  });
});

describe("the daemon's log of one-time links that are not there", () => {
  it('writes the first, then one line counting the rest, naming no link', async () => {
    const { daemon, lines } = await startTestDaemon();
    const times = 20;
    for (let index = 0; index < times; index += 1) {
      const response = await fetch(`${daemon.url}/v1/links/guessed-link-${index}`);
      expect(response.status).toBe(410);
    }
    await daemon.close();
    expect(lines.filter((line) => line.fields['status'] === 410)).toEqual([
      { level: 'info', fields: expect.objectContaining({ errorCode: 'link_unavailable' }), message: 'request' },
      {
        level: 'warn',
        fields: expect.objectContaining({ refusal: 'link_unavailable', refused: times - 1 }),
        message: expect.stringContaining(
          `one-time links that were used, expired or never made (410): ${times - 1} more,`,
        ),
      },
    ]);
    expect(JSON.stringify(lines)).not.toContain('guessed-link');
  });
});

describe("the daemon's log of refused upgrades, foreign hosts and sockets without the token", () => {
  it('writes the first of each kind, then one line per kind counting the rest', async () => {
    const { daemon, lines } = await startTestDaemon();
    const socketUrl = `${daemon.url.replace('http', 'ws')}/v1/ws`;
    const times = 20;
    for (let index = 0; index < times; index += 1) {
      expect(await statusWithHost(daemon.port, `rebound-${index}.example:${daemon.port}`)).toBe(403);
      expect(await refusedUpgrade(socketUrl, { origin: `http://evil-${index}.example` })).toBe(403);
      expect(await closeCodeAfter(socketUrl, JSON.stringify({ type: 'auth', token: `wrong-${index}` }))).toBe(4401);
      expect(await closeCodeAfter(socketUrl, 'not json')).toBe(4401);
    }
    // A socket that shows the token is logged as ever, as its upgrade.
    const allowed = await openSocket(socketUrl);
    const ready = new Promise((resolve) => allowed.once('message', resolve));
    allowed.send(JSON.stringify({ type: 'auth', token: daemon.token }));
    await ready;
    // Sockets that wait for their auth frame fill the daemon's room for them: the next upgrades get 503.
    // (The daemon's shutdown closes them.)
    await Promise.all(Array.from({ length: maxUnauthenticatedSockets }, () => openSocket(socketUrl)));
    for (let index = 0; index < times; index += 1) expect(await refusedUpgrade(socketUrl)).toBe(503);
    await daemon.close();

    expect(lines.filter((line) => line.fields['status'] === 403)).toEqual([
      { level: 'info', fields: expect.objectContaining({ status: 403, route: '/health' }), message: 'request' },
      {
        level: 'warn',
        fields: expect.objectContaining({ status: 403, refusal: 'foreign_host_or_origin', refused: 2 * times - 1 }),
        message: expect.stringContaining(`refused for a foreign Host or Origin (403): ${2 * times - 1} more,`),
      },
    ]);
    expect(lines.filter((line) => line.fields['closeCode'] === 4401)).toEqual([
      {
        level: 'info',
        fields: expect.objectContaining({ closeCode: 4401, reason: 'unauthorized' }),
        message: 'websocket closed by the daemon',
      },
      {
        level: 'warn',
        fields: expect.objectContaining({ closeCode: 4401, refusal: 'websocket_unauthorized', refused: 2 * times - 1 }),
        message: expect.stringContaining(`WebSockets closed without a valid auth frame (4401): ${2 * times - 1} more,`),
      },
    ]);
    expect(lines.filter((line) => line.fields['status'] === 503)).toEqual([
      { level: 'info', fields: expect.objectContaining({ status: 503, route: '/v1/ws' }), message: 'upgrade' },
      {
        level: 'warn',
        fields: expect.objectContaining({ status: 503, refusal: 'websocket_too_many_waiting', refused: times - 1 }),
        message: expect.stringContaining(`waited for their auth frame (503): ${times - 1} more,`),
      },
    ]);
    // Only the socket that showed the token has an upgrade line.
    expect(lines.filter((line) => line.fields['status'] === 101)).toEqual([
      { level: 'info', fields: expect.objectContaining({ route: '/v1/ws', status: 101 }), message: 'upgrade' },
    ]);
    const written = JSON.stringify(lines);
    expect(written).not.toContain('rebound-');
    expect(written).not.toContain('evil-');
    expect(written).not.toContain('wrong-');
  });
});
