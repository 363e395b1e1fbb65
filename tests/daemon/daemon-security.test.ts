import { existsSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { type Daemon, readToken, rotateToken } from '@tether/daemon';
import { agentErrorOf } from '@tether/testkit';
import { describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import {
  SocketClient,
  daemonPerTest,
  dataDirOf,
  openEventStream,
  openSession,
  readEventsUntil,
  sseFrames,
} from './daemon-test-helpers.js';

const fixture = daemonPerTest();
const { start } = fixture;

/** A raw HTTP request, so a test can send any Host header (fetch will not). */
function rawRequest(
  daemon: Daemon,
  options: { path: string; method?: string; headers: Record<string, string> },
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      {
        host: '127.0.0.1',
        port: daemon.port,
        path: options.path,
        method: options.method ?? 'GET',
        headers: options.headers,
      },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body += chunk));
        response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body }));
      },
    );
    request.on('error', reject);
    request.end();
  });
}

describe('who may talk to the daemon', () => {
  it('answers 401 with an empty body without the token or with a wrong one; /health is public', async () => {
    const { daemon } = await start();
    const missing = await fetch(`${daemon.url}/v1/sessions`);
    expect(missing.status).toBe(401);
    expect(await missing.text()).toBe('');
    const wrong = await fetch(`${daemon.url}/v1/sessions`, { headers: { authorization: `Bearer ${daemon.token}x` } });
    expect(wrong.status).toBe(401);
    expect(await wrong.text()).toBe('');
    // Tokens never go in URLs: a query-string token is ignored.
    expect((await fetch(`${daemon.url}/v1/sessions?token=${daemon.token}`)).status).toBe(401);
    // Unknown routes under /v1 are not revealed without the token either.
    expect((await fetch(`${daemon.url}/v1/nothing-here`)).status).toBe(401);
    expect(
      (await fetch(`${daemon.url}/v1/sessions`, { headers: { authorization: `Bearer ${daemon.token}` } })).status,
    ).toBe(200);
    const health = await fetch(`${daemon.url}/health`);
    expect(await health.json()).toEqual({ ok: true, version: '0.1.0' });
  });

  it('answers 403 with an empty body to a foreign Host or Origin, and sends CORS only to allowed origins', async () => {
    const { daemon } = await start({ allowOrigins: ['http://localhost:5173'] });
    const authorization = `Bearer ${daemon.token}`;
    const foreignHost = await rawRequest(daemon, {
      path: '/v1/sessions',
      headers: { host: `evil.example:${daemon.port}`, authorization },
    });
    expect(foreignHost).toMatchObject({ status: 403, body: '' });
    const wrongPort = await rawRequest(daemon, { path: '/health', headers: { host: `127.0.0.1:${daemon.port + 1}` } });
    expect(wrongPort.status).toBe(403);
    const rebound = await rawRequest(daemon, {
      path: '/v1/sessions',
      headers: { host: `localhost:${daemon.port}`, origin: 'http://evil.example', authorization },
    });
    expect(rebound).toMatchObject({ status: 403, body: '' });

    const own = await rawRequest(daemon, {
      path: '/v1/sessions',
      headers: { host: `localhost:${daemon.port}`, origin: `http://localhost:${daemon.port}`, authorization },
    });
    expect(own.status).toBe(200);
    expect(own.headers['access-control-allow-origin']).toBeUndefined();
    // Some origin is allowed, so every answer varies with the Origin: a cache keeps them apart.
    expect(own.headers['vary']).toMatch(/\bOrigin\b/);
    const withoutOrigin = await rawRequest(daemon, {
      path: '/v1/sessions',
      headers: { host: `localhost:${daemon.port}`, authorization },
    });
    expect(withoutOrigin.headers['vary']).toMatch(/\bOrigin\b/);
    const ipv6 = await rawRequest(daemon, { path: '/health', headers: { host: `[::1]:${daemon.port}` } });
    expect(ipv6.status).toBe(200);

    const allowed = await rawRequest(daemon, {
      path: '/v1/sessions',
      headers: { host: `127.0.0.1:${daemon.port}`, origin: 'http://localhost:5173', authorization },
    });
    expect(allowed.status).toBe(200);
    expect(allowed.headers['access-control-allow-origin']).toBe('http://localhost:5173');
    expect(allowed.headers['vary']).toMatch(/\bOrigin\b/);
    // A page there can read when to come back after a 429 or 503, and what a route allows after a 405.
    expect(allowed.headers['access-control-expose-headers']).toBe('Retry-After, Allow');
    const preflight = await rawRequest(daemon, {
      path: '/v1/commands',
      method: 'OPTIONS',
      headers: {
        host: `127.0.0.1:${daemon.port}`,
        origin: 'http://localhost:5173',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers['access-control-allow-headers']).toMatch(/Authorization/);

    const refusedUpgrade = await new Promise<number>((resolve) => {
      const socket = new WebSocket(`${daemon.url.replace('http', 'ws')}/v1/ws`, {
        headers: { origin: 'http://evil.example' },
      });
      socket.on('unexpected-response', (_request, response) => resolve(response.statusCode!));
      socket.on('error', () => undefined);
    });
    expect(refusedUpgrade).toBe(403);
  });

  it('answers at its advertised address (a proxy or a name on the network), and at no other name', async () => {
    // Links in notifications and session_owned_elsewhere name this address: it was refused with 403.
    const { daemon } = await start({ advertiseUrl: 'https://tether.example.test' });
    const authorization = `Bearer ${daemon.token}`;
    const viaProxy = { host: 'tether.example.test', origin: 'https://tether.example.test' };
    expect((await rawRequest(daemon, { path: '/health', headers: { host: viaProxy.host } })).status).toBe(200);
    expect((await rawRequest(daemon, { path: '/health', headers: { host: 'TETHER.example.test:443' } })).status).toBe(
      200,
    );
    const read = await rawRequest(daemon, { path: '/v1/sessions', headers: { ...viaProxy, authorization } });
    expect(read.status).toBe(200);
    // Same-origin for a browser that came through the proxy: no CORS is needed, none is sent.
    expect(read.headers['access-control-allow-origin']).toBeUndefined();
    // A POST from the proxied web UI passes the origin check (and is then judged on its body).
    const posted = await rawRequest(daemon, {
      path: '/v1/commands',
      method: 'POST',
      headers: { ...viaProxy, authorization, 'content-type': 'application/json' },
    });
    expect(posted.status).toBe(400);
    const upgraded = await new Promise<number>((resolve) => {
      const socket = new WebSocket(`${daemon.url.replace('http', 'ws')}/v1/ws`, { headers: viaProxy });
      socket.on('open', () => {
        resolve(101);
        socket.close();
      });
      socket.on('unexpected-response', (_request, response) => resolve(response.statusCode!));
      socket.on('error', () => undefined);
    });
    expect(upgraded).toBe(101);

    const elsewhere: Record<string, string>[] = [
      { host: 'evil.example' },
      { host: 'tether.example.test:8443' },
      { host: 'tether.example.test.evil.example' },
      { host: viaProxy.host, origin: 'http://tether.example.test' },
      { host: viaProxy.host, origin: 'https://evil.example' },
    ];
    for (const headers of elsewhere) {
      const refused = await rawRequest(daemon, { path: '/v1/sessions', headers: { ...headers, authorization } });
      expect(refused, JSON.stringify(headers)).toMatchObject({ status: 403, body: '' });
    }
  });

  it('refuses an --allow-origin or --advertise-url that is no http(s) origin with a typed error, before anything is written', async () => {
    const environment = await fixture.environment();
    for (const options of [
      { allowOrigins: ['localhost:5173'] },
      { allowOrigins: ['null'] },
      { advertiseUrl: 'tether.example.test' },
      { advertiseUrl: 'ftp://tether.example.test' },
    ]) {
      const error = await agentErrorOf(fixture.daemonOn(environment, options));
      expect(error, JSON.stringify(options)).toMatchObject({ code: 'invalid_command' });
      expect(error.message).toContain('http');
    }
    expect(existsSync(dataDirOf(environment))).toBe(false);
  });

  it('closes a socket with 4401 when the first frame is not a valid auth frame', async () => {
    const { daemon } = await start();
    const wrongToken = new SocketClient(daemon.url);
    await new Promise((resolve) => wrongToken.socket.once('open', resolve));
    wrongToken.send({ type: 'auth', token: 'tether_wrong' });
    expect((await wrongToken.closed).code).toBe(4401);
    const noAuth = new SocketClient(daemon.url);
    await new Promise((resolve) => noAuth.socket.once('open', resolve));
    noAuth.send({ type: 'subscribe', id: 'c1', sessionId: 'ses_00000000000000000000000000000000' });
    expect((await noAuth.closed).code).toBe(4401);
    expect(noAuth.frames).toEqual([]);
  });

  it('token rotation: the old token stops working at once, an open socket closes with 4401 and an open stream ends', async () => {
    const { environment, daemon, api } = await start();
    const oldToken = daemon.token;
    const sessionId = await openSession(api, environment.workspace);
    const stream = sseFrames((await openEventStream(daemon, sessionId)).body!);
    await readEventsUntil(stream, (event) => event.type === 'session.opened');
    const socket = await SocketClient.connect(daemon);

    const newToken = await rotateToken(dataDirOf(environment));
    expect(newToken).not.toBe(oldToken);
    expect(await readToken(dataDirOf(environment))).toBe(newToken);
    expect(
      (await fetch(`${daemon.url}/v1/sessions`, { headers: { authorization: `Bearer ${oldToken}` } })).status,
    ).toBe(401);
    expect((await socket.closed).code).toBe(4401);
    // The stream ends (no more frames) instead of serving a client whose token was revoked.
    for await (const frame of stream) expect(frame.data).toBeUndefined();

    expect(daemon.token).toBe(newToken);
    expect(
      (await fetch(`${daemon.url}/v1/sessions`, { headers: { authorization: `Bearer ${newToken}` } })).status,
    ).toBe(200);
    const again = await SocketClient.connect(daemon);
    again.close();
  });
});
