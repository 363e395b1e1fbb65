import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { type Daemon, startDaemon } from '@tether/daemon';
import { diffLimits } from '@tether/protocol';
import { createAgentRuntime } from '@tether/runtime';
import { agentErrorOf, createMockProvider } from '@tether/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Client, client, openSession, silentLogger } from './daemon-test-helpers.js';

// What the daemon answers a request it cannot serve: a wrong method, a diff larger than the cap, a malformed run id.
let root: string;
let daemon: Daemon;
let api: Client;

beforeEach(async () => {
  root = await realpath(await mkdtemp(path.join(os.tmpdir(), 'tether-route-refusals-')));
  // With the web UI's files: its GET at every path must not hide the API's 404s and 405s.
  const web = path.join(root, 'web');
  await mkdir(web);
  await writeFile(path.join(web, 'index.html'), '<!doctype html><title>t</title>');
  daemon = await startDaemon({
    dataDir: path.join(root, 'data'),
    port: 0,
    providers: [createMockProvider()],
    staticDirectory: web,
    logger: silentLogger,
  });
  api = client(daemon);
});

afterEach(async () => {
  await daemon.close();
  await rm(root, { recursive: true, force: true });
});

type ErrorBody = { error: { code: string; message: string; details?: Record<string, unknown> } };

async function refusal(response: Response) {
  const body = (await response.json()) as ErrorBody;
  return { status: response.status, allow: response.headers.get('allow'), ...body.error };
}

describe('a route asked with a method it does not answer', () => {
  it('is 405 method_not_allowed with an Allow header, not 404', async () => {
    const sessionId = await openSession(api, root);
    const cases: [method: string, route: string, allow: string][] = [
      ['DELETE', '/v1/sessions', 'GET, HEAD'],
      ['PUT', `/v1/sessions/${sessionId}/events`, 'GET, HEAD'],
      ['POST', `/v1/sessions/${sessionId}`, 'DELETE, GET, HEAD'],
      // Through the web UI's GET catch-all, which hands every /v1 path back to the API.
      ['GET', '/v1/commands', 'POST'],
      ['PATCH', '/v1/providers', 'GET, HEAD'],
    ];
    for (const [method, route, allow] of cases) {
      const answer = await refusal(await api.request(method, route));
      expect(answer, `${method} ${route}`).toMatchObject({
        status: 405,
        allow,
        code: 'method_not_allowed',
        details: { allowedMethods: allow.split(', ') },
      });
      expect(answer.message).toContain(allow);
    }
    // Nothing changed: the session is still there, open.
    expect(((await (await api.request('GET', `/v1/sessions/${sessionId}`)).json()) as { state: string }).state).toBe(
      'idle',
    );
  });

  it('a one-time link asked with another method is 405 too, without a token, not 401', async () => {
    // The link is its own credential: a wrong method on it is a wrong method, whatever the token.
    for (const method of ['PUT', 'DELETE', 'PATCH']) {
      const answer = await refusal(await fetch(`${daemon.url}/v1/links/unknown-token`, { method }));
      expect(answer, method).toMatchObject({ status: 405, allow: 'GET, HEAD, POST', code: 'method_not_allowed' });
    }
    // The methods it answers still refuse an unknown token as such.
    expect((await fetch(`${daemon.url}/v1/links/unknown-token`, { method: 'POST' })).status).toBe(410);
  });

  it('serves a request that asks to upgrade to anything but a WebSocket (h2c) as it is, not 404', async () => {
    const asked = (route: string) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const request = httpRequest(`${daemon.url}${route}`, {
          headers: { authorization: `Bearer ${daemon.token}`, connection: 'Upgrade, HTTP2-Settings', upgrade: 'h2c' },
        });
        request.on('response', (response) => {
          let body = '';
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => {
            body += chunk;
          });
          response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
        });
        request.on('error', reject);
        request.end();
      });
    expect((await asked('/health')).status).toBe(200);
    const listed = await asked('/v1/sessions');
    expect(listed.status).toBe(200);
    expect(JSON.parse(listed.body)).toMatchObject({ sessions: [] });
  });

  it('leaves a path no route has a 404, under /v1 and for the web UI', async () => {
    for (const [method, route] of [
      ['GET', '/v1/no-such-route'],
      ['DELETE', '/v1/no-such-route'],
      ['GET', '/v1/runs/run_00000000000000000000000000000000'],
      ['GET', '/no-such-page.js'],
      ['POST', '/no-such-page'],
    ] as const) {
      const answer = await refusal(await api.request(method, route));
      expect(answer, `${method} ${route}`).toMatchObject({ status: 404, allow: null, code: 'route_not_found' });
    }
  });
});

describe("a diff's maxBytes", () => {
  it('has one cap, the same in the daemon and in the runtime, and the refusal names it', async () => {
    const sessionId = await openSession(api, root);
    const tooMuch = diffLimits.maxBytes + 1;
    const overHttp = await refusal(await api.request('GET', `/v1/sessions/${sessionId}/diff?maxBytes=${tooMuch}`));
    expect(overHttp).toMatchObject({ status: 400, code: 'invalid_command', details: { reason: 'invalid_max_bytes' } });
    expect(overHttp.message).toContain(String(diffLimits.maxBytes));

    const runtime = await createAgentRuntime({ providers: [createMockProvider()] });
    try {
      const opened = await runtime.openSession({ workspace: { kind: 'directory', path: root } });
      const inProcess = await agentErrorOf(runtime.getSessionDiff(opened.sessionId, { maxBytes: tooMuch }));
      expect(inProcess).toMatchObject({ code: 'invalid_command', details: { reason: 'invalid_max_bytes' } });
      expect(inProcess.message).toContain(String(diffLimits.maxBytes));
      // At the cap itself both go on to the session: a directory workspace has no diff.
      expect(
        (await agentErrorOf(runtime.getSessionDiff(opened.sessionId, { maxBytes: diffLimits.maxBytes }))).code,
      ).toBe('capability_unsupported');
    } finally {
      await runtime.shutdown();
    }
    expect(
      (await refusal(await api.request('GET', `/v1/sessions/${sessionId}/diff?maxBytes=${diffLimits.maxBytes}`))).code,
    ).toBe('capability_unsupported');
  });
});

describe('a run id that is not one', () => {
  it('is a typed 400 wherever the API takes a run id, and changes nothing', async () => {
    const sessionId = await openSession(api, root);
    for (const command of [
      { type: 'interrupt_run', sessionId, runId: 'garbage' },
      { type: 'interrupt_run', sessionId, runId: `run_${'A'.repeat(32)}` },
      // Letters past f: not the hex a run id is made of, as the message says.
      { type: 'interrupt_run', sessionId, runId: `run_${'z'.repeat(32)}` },
      { type: 'fork_session', sessionId, atRunId: "'; drop table runs; --" },
      { type: 'rewind_session', sessionId, toRunId: 'run_' },
    ]) {
      const answer = await refusal(
        await api.request('POST', '/v1/commands', { body: { commandId: `bad-run-id-${command.type}`, ...command } }),
      );
      expect(answer, JSON.stringify(command)).toMatchObject({ status: 400, code: 'invalid_command' });
    }
    const sessions = (await (await api.request('GET', '/v1/sessions')).json()) as { sessions: unknown[] };
    expect(sessions.sessions).toHaveLength(1);
  });
});
