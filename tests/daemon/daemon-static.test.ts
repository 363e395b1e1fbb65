import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Daemon } from '@tether/daemon';
import { agentErrorOf, createClaudeTestEnvironment } from '@tether/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RecordingLogger, client, openEventStream, openSession, startTestDaemon } from './daemon-test-helpers.js';

// One daemon for the file: every test only reads.
let root: string;
let daemon: Daemon;
let cleanupEnvironment: () => Promise<void>;

const indexHtml =
  '<!doctype html><html><head><script type="module" src="/assets/app-1.js"></script></head><body><div id="root"></div></body></html>';

beforeAll(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'tether-static-'));
  const web = path.join(root, 'web');
  await mkdir(path.join(web, 'assets'), { recursive: true });
  await writeFile(path.join(web, 'index.html'), indexHtml);
  await writeFile(path.join(web, 'assets', 'app-1.js'), 'console.log(1);');
  await writeFile(path.join(web, 'assets', 'odd.weird'), 'bytes');
  await writeFile(path.join(web, '.hidden'), 'secret');
  await writeFile(path.join(root, 'outside.txt'), 'outside the root');
  await symlink(path.join(root, 'outside.txt'), path.join(web, 'escape.txt'));
  const environment = await createClaudeTestEnvironment();
  cleanupEnvironment = () => environment.cleanup();
  daemon = await startTestDaemon(environment, { staticDirectory: web });
});

afterAll(async () => {
  await daemon?.close();
  await cleanupEnvironment?.();
  await rm(root, { recursive: true, force: true });
});

const get = (route: string, headers: Record<string, string> = {}) => fetch(`${daemon.url}${route}`, { headers });

describe('the daemon serves the web UI', () => {
  it('serves index.html at / without a token, with the strict headers', async () => {
    const response = await get('/');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(response.headers.get('cache-control')).toBe('no-cache');
    const csp = response.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('referrer-policy')).toBe('no-referrer');
    expect(await response.text()).toBe(indexHtml);
  });

  it('serves hashed assets as immutable, and HEAD without a body', async () => {
    const response = await get('/assets/app-1.js');
    expect(response.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(response.headers.get('cache-control')).toContain('immutable');
    expect(await response.text()).toBe('console.log(1);');
    const head = await fetch(`${daemon.url}/assets/app-1.js`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe('15');
    expect(await head.text()).toBe('');
    expect((await get('/assets/odd.weird')).headers.get('content-type')).toBe('application/octet-stream');
  });

  it('answers a browser navigation to an app path with index.html, and nothing else', async () => {
    const navigation = await get('/sessions/ses_0123', { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' });
    expect(navigation.status).toBe(200);
    expect(await navigation.text()).toBe(indexHtml);
    expect((await get('/sessions/ses_0123', { accept: 'application/json' })).status).toBe(404);
    // A missing script must not come back as HTML.
    expect((await get('/assets/missing.js', { accept: 'text/html' })).status).toBe(404);
    expect((await fetch(`${daemon.url}/sessions/x`, { method: 'POST', headers: { accept: 'text/html' } })).status).toBe(
      404,
    );
  });

  it('never serves a file outside its directory, a hidden file or a link leading out', async () => {
    for (const route of [
      '/../outside.txt',
      '/%2e%2e/outside.txt',
      '/assets/..%2f..%2foutside.txt',
      '/.hidden',
      '/escape.txt',
      '/%2e%2e%5coutside.txt',
    ]) {
      const response = await get(route, { accept: 'text/html' });
      const body = await response.text();
      expect(body, route).not.toContain('outside the root');
      expect(body, route).not.toContain('secret');
    }
  });

  it('keeps every /v1 route behind the token, and an unknown one is the API 404', async () => {
    expect((await get('/v1/sessions', { accept: 'text/html' })).status).toBe(401);
    const unknown = await get('/v1/nothing-here', { accept: 'text/html', authorization: `Bearer ${daemon.token}` });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ error: { code: 'route_not_found' } });
    expect((await get('/health')).headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('serves the UI to its own origin and refuses a foreign one', async () => {
    expect((await get('/', { origin: daemon.url })).status).toBe(200);
    expect((await get('/', { origin: 'http://evil.example' })).status).toBe(403);
  });
});

describe('request labels on a daemon serving the web UI', () => {
  it("gives each API route its own label in the metrics and the request log, the UI's files one of theirs, and only unmatched paths 'unmatched'", async () => {
    const environment = await createClaudeTestEnvironment();
    const logger = new RecordingLogger();
    const labelled = await startTestDaemon(environment, { staticDirectory: path.join(root, 'web'), logger });
    try {
      const api = client(labelled);
      const sessionId = await openSession(api, environment.workspace);
      const authorized = { authorization: `Bearer ${labelled.token}` };
      const at = (route: string, headers: Record<string, string> = authorized) =>
        fetch(`${labelled.url}${route}`, { headers });
      expect((await at(`/v1/sessions/${sessionId}`)).status).toBe(200);
      expect((await at('/v1/sessions')).status).toBe(200);
      expect((await at('/v1/sessions', {})).status).toBe(401);
      expect((await at('/health', {})).status).toBe(200);
      expect((await at('/', {})).status).toBe(200);
      expect((await at('/assets/app-1.js', {})).status).toBe(200);
      expect((await at('/v1/nothing-here')).status).toBe(404);
      expect((await at('/no-such-file.txt', {})).status).toBe(404);
      const controller = new AbortController();
      const stream = await openEventStream(labelled, sessionId, { signal: controller.signal });
      expect(stream.status).toBe(200);
      controller.abort();
      const ended = await logger.waitFor((line) => line.message === 'event stream ended');
      // The stream's request line (written as its handler returned, before it ended) names the route its end names.
      expect(ended.route).toBe('/v1/sessions/:id/events');
      expect(logger.lines.filter((line) => line.message === 'request' && line.route === ended.route)).toHaveLength(1);

      const metrics = await (await at('/v1/metrics')).text();
      const counted = (route: string, status: number) =>
        new RegExp(`tether_http_requests_total\\{route="${route.replaceAll('/', '\\/')}",status="${status}"\\} [1-9]`);
      expect(metrics).toMatch(counted('/v1/commands', 200));
      expect(metrics).toMatch(counted('/v1/sessions/:id', 200));
      expect(metrics).toMatch(counted('/v1/sessions', 200));
      expect(metrics).toMatch(counted('/v1/sessions', 401));
      expect(metrics).toMatch(counted('/health', 200));
      expect(metrics).toMatch(counted('web_ui', 200));
      expect(metrics).toMatch(counted('unmatched', 404));
      // Two unknown paths, nothing else: every API request was labelled with its route.
      expect(metrics).toContain('tether_http_requests_total{route="unmatched",status="404"} 2');
      expect(metrics).not.toMatch(/route="unmatched",status="(200|401)"/);

      const requestLines = logger.lines.filter((line) => line.message === 'request');
      expect(requestLines.find((line) => line.route === '/v1/sessions/:id')).toMatchObject({ status: 200, sessionId });
      // Both are counted above; a path no route answers is logged rate-limited: the first, the next one counted.
      expect(requestLines.filter((line) => line.route === 'unmatched').map((line) => line.status)).toEqual([404]);
    } finally {
      await labelled.close();
      await environment.cleanup();
    }
  });
});

describe('the static-files option', () => {
  it('refuses a directory without index.html with a typed error', async () => {
    const environment = await createClaudeTestEnvironment();
    try {
      const error = await agentErrorOf(startTestDaemon(environment, { staticDirectory: path.join(root, 'nothing') }));
      expect(error.code).toBe('invalid_command');
      expect(error.message).toContain('index.html');
    } finally {
      await environment.cleanup();
    }
  });
});
