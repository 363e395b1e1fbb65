import { mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type Daemon, startDaemon } from '@tether/daemon';
import { createHash } from 'node:crypto';
import { createTetherClient } from '@tether/client';
import { ProtocolEvent, type SessionSnapshot, type SubmitTurnReceipt, imageLimits } from '@tether/protocol';
import type { AgentProviderV1Part } from '@tether/provider-spec';
import { createMockProvider, pngBytes } from '@tether/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  type Client,
  SocketClient,
  client,
  completes,
  openEventStream,
  openSession,
  readEventsUntil,
  silentLogger,
  sseFrames,
} from './daemon-test-helpers.js';

// The route surface does not need an agent: a mock provider keeps these fast. Agent behaviour is in the real-claude files.
let root: string;
let daemon: Daemon;
let api: Client;

beforeEach(async () => {
  root = await realpath(await mkdtemp(path.join(os.tmpdir(), 'tether-daemon-routes-')));
  daemon = await startDaemon({
    dataDir: path.join(root, 'data'),
    port: 0,
    providers: [createMockProvider({ capabilities: { images: true, inputParts: ['text', 'image', 'file'] } })],
    logger: silentLogger,
  });
  api = client(daemon);
});

afterEach(async () => {
  await daemon.close();
  await rm(root, { recursive: true, force: true });
});

type ErrorBody = { error: { code: string; message: string; retryable: boolean } };

async function errorOf(response: Response): Promise<{ status: number; code: string }> {
  const body = (await response.json()) as ErrorBody;
  return { status: response.status, code: body.error.code };
}

describe('the daemon routes', () => {
  it('maps errors through the one table', async () => {
    expect(await errorOf(await api.request('POST', '/v1/commands', { body: '{not json' }))).toEqual({
      status: 400,
      code: 'invalid_command',
    });
    expect(await errorOf(await api.request('POST', '/v1/commands', { body: { type: 'submit_turn' } }))).toEqual({
      status: 400,
      code: 'invalid_command',
    });
    expect(await errorOf(await api.request('GET', '/v1/no-such-route'))).toEqual({
      status: 404,
      code: 'route_not_found',
    });
    expect(await errorOf(await api.request('GET', '/v1/sessions/ses_00000000000000000000000000000000'))).toEqual({
      status: 404,
      code: 'session_not_found',
    });
    expect(await errorOf(await api.request('GET', '/v1/sessions/ses_00000000000000000000000000000000/events'))).toEqual(
      { status: 404, code: 'session_not_found' },
    );
    const sessionId = await openSession(api, root);
    expect(await errorOf(await api.request('GET', `/v1/sessions/${sessionId}/events?after=-1`))).toEqual({
      status: 400,
      code: 'invalid_command',
    });
    // A query parameter the route does not take, or one given twice, is refused, not ignored.
    for (const route of [
      `/v1/sessions/${sessionId}/events?afterSeq=10`,
      '/v1/sessions?limt=5',
      '/v1/sessions?state=idle&state=closed',
    ])
      expect(await errorOf(await api.request('GET', route)), route).toEqual({ status: 400, code: 'invalid_command' });
    // Past the session's last event: said, not a stream that silently skips what comes.
    const past = await api.request('GET', `/v1/sessions/${sessionId}/events?after=99999`);
    expect(past.status).toBe(400);
    expect(((await past.json()) as ErrorBody).error).toMatchObject({
      code: 'invalid_command',
      details: { reason: 'start_past_end' },
      message: expect.stringContaining("the session's last event is 1"),
    });
    const body = (await (
      await api.request('POST', '/v1/commands', {
        body: { type: 'open_session', commandId: 'x', workspace: { kind: 'directory', path: 'relative' } },
      })
    ).json()) as ErrorBody;
    expect(body.error).toMatchObject({ code: 'invalid_workspace', retryable: false });
  });

  it('a repeated commandId returns the original receipt', async () => {
    const command = { type: 'open_session', commandId: 'open-once', workspace: { kind: 'directory', path: root } };
    const first = await (await api.request('POST', '/v1/commands', { body: command })).json();
    const second = await (await api.request('POST', '/v1/commands', { body: command })).json();
    expect(second).toEqual(first);
    expect(
      ((await (await api.request('GET', '/v1/sessions')).json()) as { sessions: unknown[] }).sessions,
    ).toHaveLength(1);
  });

  it('pages sessions newest first with an opaque cursor, filtered by state', async () => {
    const opened: string[] = [];
    for (let index = 0; index < 5; index += 1) opened.push(await openSession(api, root));
    await api.command({ type: 'close_session', sessionId: opened[1]! });
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const query: string = cursor === null ? '?limit=2' : `?limit=2&before=${cursor}`;
      const page = (await (await api.request('GET', `/v1/sessions${query}`)).json()) as {
        sessions: SessionSnapshot[];
        next: string | null;
      };
      expect(page.sessions.length).toBeLessThanOrEqual(2);
      seen.push(...page.sessions.map((session) => session.sessionId));
      cursor = page.next;
    } while (cursor !== null);
    expect(seen).toEqual([...opened].reverse());
    const closed = (await (await api.request('GET', '/v1/sessions?state=closed')).json()) as {
      sessions: SessionSnapshot[];
      next: string | null;
    };
    expect(closed).toMatchObject({ sessions: [{ sessionId: opened[1], state: 'closed' }], next: null });
    expect(await errorOf(await api.request('GET', '/v1/sessions?state=sleeping'))).toEqual({
      status: 400,
      code: 'invalid_command',
    });
    expect(await errorOf(await api.request('GET', '/v1/sessions?before=garbage'))).toEqual({
      status: 400,
      code: 'invalid_command',
    });
    expect(await errorOf(await api.request('GET', '/v1/sessions?limit=0'))).toEqual({
      status: 400,
      code: 'invalid_command',
    });
  });

  it('deletes a closed session (200, what became of its workspace) and refuses an open one (409 session_open); a stream on it ends', async () => {
    const sessionId = await openSession(api, root);
    expect(await errorOf(await api.request('DELETE', `/v1/sessions/${sessionId}`))).toEqual({
      status: 409,
      code: 'session_open',
    });
    const frames = sseFrames((await openEventStream(daemon, sessionId)).body!);
    await api.command({ type: 'close_session', sessionId });
    await readEventsUntil(frames, (event) => event.type === 'session.closed');
    const deleted = await api.request('DELETE', `/v1/sessions/${sessionId}`);
    expect(deleted.status).toBe(200);
    expect(await deleted.json()).toMatchObject({ sessionId, workspaceStatus: { kind: 'directory', state: 'kept' } });
    expect(await frames.next()).toMatchObject({ done: true });
    expect(await errorOf(await api.request('GET', `/v1/sessions/${sessionId}`))).toEqual({
      status: 404,
      code: 'session_not_found',
    });
  });

  it('a session snapshot says which modes need a restart, and set_permission_mode restarts into one only when asked', async () => {
    // Like Claude's: the agent starts with the first turn and, once running, cannot enter bypass live.
    const provider = createMockProvider({
      requiresRestartFor: (mode, session) =>
        mode === 'bypass' && session.turns.length > 0 && session.stops.length === 0,
    });
    const modes = await startDaemon({
      dataDir: path.join(root, 'modes'),
      port: 0,
      providers: [provider],
      logger: silentLogger,
    });
    try {
      const modesApi = client(modes);
      const sessionId = await openSession(modesApi, root);
      const snapshot = async () =>
        (await (await modesApi.request('GET', `/v1/sessions/${sessionId}`)).json()) as SessionSnapshot;
      expect((await snapshot()).modesRequiringRestart).toEqual([]);
      const frames = sseFrames((await openEventStream(modes, sessionId)).body!);
      const { runId } = await modesApi.command<SubmitTurnReceipt>({
        type: 'submit_turn',
        sessionId,
        input: [{ type: 'text', text: 'hi' }],
      });
      await readEventsUntil(frames, completes(runId));
      expect((await snapshot()).modesRequiringRestart).toEqual(['bypass']);
      const listed = (await (await modesApi.request('GET', '/v1/sessions')).json()) as { sessions: SessionSnapshot[] };
      expect(listed.sessions[0]!.modesRequiringRestart).toEqual(['bypass']);

      const refused = await modesApi.request('POST', '/v1/commands', {
        body: { type: 'set_permission_mode', commandId: 'bypass-live', sessionId, mode: 'bypass' },
      });
      expect(await errorOf(refused)).toEqual({ status: 409, code: 'requires_restart' });
      const receipt = await modesApi.command({ type: 'set_permission_mode', sessionId, mode: 'bypass', restart: true });
      expect(receipt).toMatchObject({ type: 'set_permission_mode', mode: 'bypass' });
      expect(await snapshot()).toMatchObject({ permissionMode: 'bypass', modesRequiringRestart: [] });
      await frames.return(undefined);
    } finally {
      await modes.close();
    }
  });

  it('a provider part that breaks the protocol fails its run and never reaches the store: every stored row parses, the next turn works', async () => {
    const provider = createMockProvider({
      turn: ({ runId, emit, session }) => {
        if (session.turns.length === 1)
          emit({
            type: 'run.message_delta',
            runId,
            blockId: 'b1',
            text: { html: '<b>x</b>' },
          } as unknown as AgentProviderV1Part);
        emit({ type: 'run.completed', runId, outcome: 'succeeded' });
      },
    });
    const strict = await startDaemon({
      dataDir: path.join(root, 'strict'),
      port: 0,
      providers: [provider],
      logger: silentLogger,
    });
    try {
      const strictApi = client(strict);
      const sessionId = await openSession(strictApi, root);
      const frames = sseFrames((await openEventStream(strict, sessionId)).body!);
      const first = await strictApi.command<SubmitTurnReceipt>({
        type: 'submit_turn',
        sessionId,
        input: [{ type: 'text', text: 'one' }],
      });
      const failed = (await readEventsUntil(frames, completes(first.runId))).at(-1);
      expect(failed).toMatchObject({
        outcome: 'failed',
        error: { code: 'provider_contract_violation', details: { reason: 'malformed_part' } },
      });
      const second = await strictApi.command<SubmitTurnReceipt>({
        type: 'submit_turn',
        sessionId,
        input: [{ type: 'text', text: 'two' }],
      });
      expect((await readEventsUntil(frames, completes(second.runId))).at(-1)).toMatchObject({ outcome: 'succeeded' });
      await frames.return(undefined);
      // A fresh reader replays the whole log from the store, checking each row as a client does.
      const replay = sseFrames((await openEventStream(strict, sessionId)).body!);
      const stored = await readEventsUntil(replay, completes(second.runId));
      await replay.return(undefined);
      for (const event of stored) expect(ProtocolEvent.safeParse(event).success).toBe(true);
      expect(JSON.stringify(stored)).not.toContain('<b>x</b>');
      expect(stored.filter((event) => event.type === 'diagnostic').map((event) => event.code)).toEqual([
        'runtime.malformed_part.run.message_delta',
        'runtime.part_for_inactive_run',
      ]);
    } finally {
      await strict.close();
    }
  });

  it('pings a quiet event stream with a comment line', async () => {
    const quick = await startDaemon({
      dataDir: path.join(root, 'quick'),
      port: 0,
      providers: [createMockProvider()],
      logger: silentLogger,
      pingIntervalMs: 20,
    });
    try {
      const sessionId = await openSession(client(quick), root);
      const frames = sseFrames((await openEventStream(quick, sessionId)).body!);
      expect((await frames.next()).value).toMatchObject({ id: '1' });
      expect((await frames.next()).value).toEqual({ comment: 'ping' });
      await frames.return(undefined);
    } finally {
      await quick.close();
    }
  });

  it('follows several sessions on one WebSocket', async () => {
    const [first, second] = [await openSession(api, root), await openSession(api, root)];
    const socket = await SocketClient.connect(daemon);
    try {
      socket.send({ type: 'subscribe', id: 'a', sessionId: first, afterSeq: 0 });
      socket.send({ type: 'subscribe', id: 'b', sessionId: second, afterSeq: 0 });
      socket.send({ type: 'subscribe', id: 'c', sessionId: 'ses_00000000000000000000000000000000', afterSeq: 0 });
      expect(await socket.waitFor((frame) => frame.id === 'c')).toMatchObject({
        type: 'error',
        error: { code: 'session_not_found' },
      });
      socket.send({ type: 'subscribe', id: 'd', sessionId: first, afterSeq: 500 });
      expect(await socket.waitFor((frame) => frame.id === 'd')).toMatchObject({
        type: 'error',
        error: { code: 'invalid_command', details: { reason: 'start_past_end' } },
      });
      socket.send({
        type: 'command',
        id: 'turn',
        command: {
          type: 'submit_turn',
          commandId: 'multi-1',
          sessionId: second,
          input: [{ type: 'text', text: 'hi' }],
        },
      });
      await socket.waitFor((frame) => frame.sessionId === second && frame.event?.type === 'run.completed');
      await socket.waitFor((frame) => frame.sessionId === first && frame.event?.type === 'session.opened');
      expect(socket.events(first).map((event) => event.type)).toEqual(['session.opened']);
      expect(socket.events(second).map((event) => event.seq)).toEqual(
        socket.events(second).map((_, index) => index + 1),
      );
      const subscribedAt = socket.frames.findIndex((frame) => frame.type === 'subscribed' && frame.sessionId === first);
      expect(socket.frames.findIndex((frame) => frame.sessionId === first && frame.type === 'event')).toBeGreaterThan(
        subscribedAt,
      );
    } finally {
      socket.close();
    }
  });

  it('lists providers with capabilities and availability', async () => {
    const body = await (await api.request('GET', '/v1/providers')).json();
    expect(body).toEqual({
      providers: [
        {
          name: 'mock',
          capabilities: expect.objectContaining({ interrupt: true, inputParts: ['text', 'image', 'file'] }),
          availability: { available: true, binaryPath: '/mock', source: 'option', version: 'mock' },
        },
      ],
    });
  });

  it('answers HEAD on an event stream with its headers alone, holding no subscriber', async () => {
    const sessionId = await openSession(api, root);
    const head = await fetch(`${daemon.url}/v1/sessions/${sessionId}/events`, {
      method: 'HEAD',
      headers: { authorization: `Bearer ${daemon.token}` },
    });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    // The same kept-alive connection answers the next request: the HEAD's response has ended.
    const metrics = await (await api.request('GET', '/v1/metrics')).text();
    expect(metrics).toContain('tether_subscribers 0');
  });

  it('serves Prometheus metrics counted from the runtime', async () => {
    const sessionId = await openSession(api, root);
    const frames = sseFrames((await openEventStream(daemon, sessionId)).body!);
    await api.command({ type: 'submit_turn', sessionId, input: [{ type: 'text', text: 'count me' }] });
    await readEventsUntil(frames, (event) => event.type === 'run.completed');
    const response = await api.request('GET', '/v1/metrics');
    expect(response.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    const text = await response.text();
    expect(text).toContain('# TYPE tether_runs_total counter');
    expect(text).toContain('tether_runs_total{outcome="succeeded"} 1');
    expect(text).toContain('tether_sessions{state="idle"} 1');
    expect(text).toContain('tether_subscribers 1');
    expect(text).toMatch(/tether_events_appended_total [1-9]/);
    expect(text).toContain('tether_interaction_answer_seconds_count 0');
    expect(text).toContain('tether_http_requests_total{route="/v1/commands",status="200"} 2');
    expect(text).toContain('tether_processes_active 0');
    await frames.return(undefined);
  });

  it('a second daemon on the same data dir is refused with data_dir_in_use; a taken port fails cleanly', async () => {
    await expect(
      startDaemon({
        dataDir: path.join(root, 'data'),
        port: 0,
        providers: [createMockProvider()],
        logger: silentLogger,
      }),
    ).rejects.toMatchObject({ code: 'data_dir_in_use' });
    const otherDataDir = path.join(root, 'other');
    await expect(
      startDaemon({
        dataDir: otherDataDir,
        port: daemon.port,
        providers: [createMockProvider()],
        logger: silentLogger,
      }),
    ).rejects.toMatchObject({ code: 'EADDRINUSE' });
    // The failed start released its data directory.
    const other = await startDaemon({
      dataDir: otherDataDir,
      port: 0,
      providers: [createMockProvider()],
      logger: silentLogger,
    });
    await other.close();
  });

  it('serves an OpenAPI 3.1 document generated from the zod schemas', async () => {
    const document = (await (await api.request('GET', '/v1/openapi.json')).json()) as {
      openapi: string;
      paths: Record<string, unknown>;
      components: { schemas: Record<string, { oneOf?: unknown[]; required?: string[] }> };
    };
    expect(document.openapi).toBe('3.1.0');
    expect(Object.keys(document.paths)).toEqual(
      expect.arrayContaining([
        '/v1/commands',
        '/v1/sessions',
        '/v1/sessions/{id}',
        '/v1/sessions/{id}/events',
        '/v1/providers',
        '/v1/providers/{name}/models',
        '/v1/sessions/{id}/blobs/{sha256}',
        '/v1/sessions/{id}/diff',
        '/v1/metrics',
        '/v1/ws',
      ]),
    );
    expect(Object.keys(document.components.schemas)).toEqual(
      expect.arrayContaining([
        'Command',
        'Receipt',
        'ProtocolEvent',
        'SessionSnapshot',
        'SerializedAgentError',
        'ErrorResponse',
        'SubmittedInputPart',
        'InputPart',
        'ModelList',
        'Workspace',
        'WorkspaceStatus',
        'ChangedFile',
        'SessionDiff',
      ]),
    );
    // What /v1/ws answers is in the document: a plain GET gets one of its statuses.
    const webSocket = (document.paths['/v1/ws'] as { get: { responses: Record<string, unknown> } }).get.responses;
    expect(Object.keys(webSocket).sort()).toEqual(['101', '400', '401', '403', '429', '503']);
    expect(Object.keys(webSocket)).toContain(String((await api.request('GET', '/v1/ws')).status));
    const schemas = document.components.schemas;
    // The commands of issue 13, the parts a turn may carry (submit_turn's input names them), the events.
    const command = JSON.stringify(schemas['Command']);
    for (const type of ['"fork_session"', '"rewind_session"', '"atRunId"', '"toRunId"'])
      expect(command).toContain(type);
    expect(command).toContain('"#/components/schemas/SubmittedInputPart"');
    expect(JSON.stringify(schemas['WebSocketClientFrame'])).toContain(
      '"command":{"$ref":"#/components/schemas/Command"}',
    );
    const submitted = JSON.stringify(schemas['SubmittedInputPart']);
    for (const field of ['"mediaType"', '"data"', '"path"', '"image/png"', '"image/webp"', '"file"'])
      expect(submitted).toContain(field);
    expect(JSON.stringify(schemas['InputPart'])).toContain('"sha256"');
    const events = JSON.stringify(schemas['ProtocolEvent']);
    for (const type of ['"session.forked"', '"session.rewound"', '"run.checkpointed"', '"forkedFrom"'])
      expect(events).toContain(type);
    expect(JSON.stringify(schemas['Receipt'])).toContain('"forkSessionId"');
    // Issue 14: the git_worktree workspace, what became of it, the events, the diff and delete's option.
    expect(command).toContain('"git_worktree"');
    for (const field of ['"baseRef"', '"branch"', '"repository"']) expect(command).toContain(field);
    expect(JSON.stringify(schemas['WorkspaceStatus'])).toContain('"keptBecause"');
    expect(JSON.stringify(schemas['SessionSnapshot'])).toContain('"#/components/schemas/WorkspaceStatus"');
    for (const type of ['"session.workspace_ready"', '"session.workspace_released"', '"run.files_changed"'])
      expect(events).toContain(type);
    expect(events).toContain('"#/components/schemas/ChangedFile"');
    expect(schemas['SessionDiff']?.required).toEqual(
      expect.arrayContaining(['baseCommit', 'branch', 'files', 'diff', 'truncated']),
    );
    expect(JSON.stringify(schemas['ModelList'])).toContain('"displayName"');
    type Operation = { parameters?: { name: string }[]; responses: Record<string, { content?: object }> };
    const paths = document.paths as Record<string, { get: Operation; delete?: Operation }>;
    expect(Object.keys(paths['/v1/sessions/{id}/blobs/{sha256}']!.get.responses['200']!.content!)).toEqual([
      'image/png',
      'image/jpeg',
      'image/gif',
      'image/webp',
    ]);
    expect(Object.keys(paths['/v1/providers/{name}/models']!.get.responses)).toEqual(
      expect.arrayContaining(['200', '401', '404', '501', '503']),
    );
    const diff = paths['/v1/sessions/{id}/diff']!.get;
    expect(JSON.stringify(diff.parameters?.find((parameter) => parameter.name === 'maxBytes'))).toContain('"maximum"');
    expect(JSON.stringify(diff.responses['200'])).toContain('"#/components/schemas/SessionDiff"');
    const remove = paths['/v1/sessions/{id}']!.delete!;
    expect(remove.parameters?.map((parameter) => parameter.name)).toContain('discardWorkspaceChanges');
    expect(Object.keys(remove.responses)).toEqual(expect.arrayContaining(['200', '400', '404', '409']));
    expect(JSON.stringify(remove.responses['200'])).toContain('"#/components/schemas/DeletedSession"');
    expect(JSON.stringify(document.components.schemas['Command'])).toContain('"submit_turn"');
    expect(document.components.schemas['SessionSnapshot']?.required).toEqual(
      expect.arrayContaining(['title', 'lastRun', 'lastActivityAt', 'modesRequiringRestart']),
    );
    expect(JSON.stringify(document.components.schemas['Command'])).toContain('"restart"');
    expect(JSON.stringify(document)).not.toContain('"$schema"');
  });
});

describe('images a turn carried (the blob route) and the command body limit', () => {
  /** Submits a turn and answers its run.started once the run has completed. */
  async function turn(sessionId: string, input: unknown[]) {
    const frames = sseFrames((await openEventStream(daemon, sessionId)).body!);
    const { runId } = await api.command<SubmitTurnReceipt>({ type: 'submit_turn', sessionId, input });
    const events = await readEventsUntil(frames, completes(runId));
    await frames.return(undefined);
    return events.find((event) => event.type === 'run.started' && event.runId === runId) as Extract<
      ProtocolEvent,
      { type: 'run.started' }
    >;
  }

  it('answers an image a turn carried with its bytes, immutable; only to the token holder, only through its session', async () => {
    const sessionId = await openSession(api, root);
    const png = pngBytes(8, 6);
    const sha256 = createHash('sha256').update(png).digest('hex');
    const started = await turn(sessionId, [
      { type: 'image', mediaType: 'image/png', data: Buffer.from(png).toString('base64') },
      { type: 'text', text: 'What is this?' },
    ]);
    expect(started.input![0]).toEqual({
      type: 'image',
      mediaType: 'image/png',
      sha256,
      byteLength: png.byteLength,
      width: 8,
      height: 6,
    });

    const blob = await api.request('GET', `/v1/sessions/${sessionId}/blobs/${sha256}`);
    expect(blob.status).toBe(200);
    expect(blob.headers.get('content-type')).toBe('image/png');
    expect(blob.headers.get('content-length')).toBe(String(png.byteLength));
    expect(blob.headers.get('cache-control')).toBe('private, max-age=31536000, immutable');
    expect(blob.headers.get('x-content-type-options')).toBe('nosniff');
    expect(new Uint8Array(await blob.arrayBuffer())).toEqual(png);
    // A cached copy is revalidated without its bytes: 304, the same validators, no body.
    const entityTag = blob.headers.get('etag')!;
    expect(entityTag).toBe(`"${sha256}"`);
    for (const ifNoneMatch of [entityTag, `W/"${'0'.repeat(64)}", W/${entityTag}`, '*']) {
      const revalidated = await api.request('GET', `/v1/sessions/${sessionId}/blobs/${sha256}`, {
        headers: { 'if-none-match': ifNoneMatch },
      });
      expect(revalidated.status, ifNoneMatch).toBe(304);
      expect(revalidated.headers.get('etag')).toBe(entityTag);
      expect(revalidated.headers.get('cache-control')).toBe('private, max-age=31536000, immutable');
      expect(await revalidated.text()).toBe('');
    }
    const otherTag = await api.request('GET', `/v1/sessions/${sessionId}/blobs/${sha256}`, {
      headers: { 'if-none-match': `"${'0'.repeat(64)}"` },
    });
    expect(otherTag.status).toBe(200);
    expect(new Uint8Array(await otherTag.arrayBuffer())).toEqual(png);
    // The client reads the same bytes.
    const read = await createTetherClient({ url: daemon.url, token: daemon.token }).readBlob(sessionId, sha256);
    expect(read).toEqual({ mediaType: 'image/png', bytes: png });

    const anonymous = await fetch(`${daemon.url}/v1/sessions/${sessionId}/blobs/${sha256}`);
    expect(anonymous.status).toBe(401);
    expect(await anonymous.text()).toBe('');

    const other = await openSession(api, root);
    expect(await errorOf(await api.request('GET', `/v1/sessions/${other}/blobs/${sha256}`))).toMatchObject({
      status: 404,
      code: 'blob_not_found',
    });
    expect(
      await errorOf(
        await api.request('GET', `/v1/sessions/${other}/blobs/${sha256}`, { headers: { 'if-none-match': entityTag } }),
      ),
    ).toMatchObject({ status: 404, code: 'blob_not_found' });
    expect(await errorOf(await api.request('GET', `/v1/sessions/${sessionId}/blobs/${'0'.repeat(64)}`))).toMatchObject({
      status: 404,
      code: 'blob_not_found',
    });
    const malformed = await api.request('GET', `/v1/sessions/${sessionId}/blobs/not-a-hash`);
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toMatchObject({
      error: { code: 'invalid_command', details: { reason: 'invalid_sha256' } },
    });
  });

  it('refuses a "PNG" holding text before anything is recorded: no run, no event', async () => {
    const sessionId = await openSession(api, root);
    const before = (await (await api.request('GET', `/v1/sessions/${sessionId}`)).json()) as SessionSnapshot;
    const refused = await api.request('POST', '/v1/commands', {
      body: {
        type: 'submit_turn',
        commandId: 'text-as-png',
        sessionId,
        input: [
          { type: 'image', mediaType: 'image/png', data: Buffer.from('just some text').toString('base64') },
          { type: 'text', text: 'What is this?' },
        ],
      },
    });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({
      error: { code: 'invalid_command', details: { reason: 'not_an_image' } },
    });
    const after = (await (await api.request('GET', `/v1/sessions/${sessionId}`)).json()) as SessionSnapshot;
    expect(after).toMatchObject({ lastSeq: before.lastSeq, lastRun: null, activeRunId: null });
  });

  it('takes a command as large as a turn whose images are at their limit together, base64', async () => {
    // A body past what the images' base64 needs (with room to spare) reaches the runtime: here
    // an unknown session answers, not the body limit.
    const data = 'A'.repeat((imageLimits.maxBytes * 4) / 3);
    const parts = Math.ceil(imageLimits.maxTotalBytes / imageLimits.maxBytes) + 1;
    const body = JSON.stringify({
      type: 'submit_turn',
      commandId: 'big-images',
      sessionId: 'ses_00000000000000000000000000000000',
      input: Array.from({ length: parts }, () => ({ type: 'image', mediaType: 'image/png', data })),
    });
    expect(body.length).toBeGreaterThan((imageLimits.maxTotalBytes * 4) / 3);
    expect(body.length).toBeLessThan(64 * 1024 * 1024);
    const response = await api.request('POST', '/v1/commands', { body });
    expect(await errorOf(response)).toMatchObject({ status: 404, code: 'session_not_found' });
  });
});
