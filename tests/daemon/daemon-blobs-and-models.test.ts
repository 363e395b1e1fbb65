import { createHash } from 'node:crypto';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createTetherClient } from '@tether/client';
import { type Daemon, startDaemon } from '@tether/daemon';
import {
  type ModelList,
  type ProtocolEvent,
  type SessionSnapshot,
  type SubmitTurnReceipt,
  imageLimits,
} from '@tether/protocol';
import { createMockProvider, pngBytes } from '@tether/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  type Client,
  client,
  completes,
  daemonPerTest,
  openEventStream,
  openSession,
  readEventsUntil,
  silentLogger,
  sseFrames,
} from './daemon-test-helpers.js';

type ErrorBody = { error: { code: string; details?: { reason?: string } } };

async function errorOf(response: Response): Promise<{ status: number; code: string; reason: string | undefined }> {
  const body = (await response.json()) as ErrorBody;
  return { status: response.status, code: body.error.code, reason: body.error.details?.reason };
}

describe('the blob route (a mock agent: what is checked here is the daemon and the runtime)', () => {
  let root: string;
  let daemon: Daemon;
  let api: Client;

  beforeEach(async () => {
    root = await realpath(await mkdtemp(path.join(os.tmpdir(), 'tether-daemon-blobs-')));
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
    expect(await errorOf(await api.request('GET', `/v1/sessions/${sessionId}/blobs/${'0'.repeat(64)}`))).toMatchObject({
      status: 404,
      code: 'blob_not_found',
    });
    expect(await errorOf(await api.request('GET', `/v1/sessions/${sessionId}/blobs/not-a-hash`))).toEqual({
      status: 400,
      code: 'invalid_command',
      reason: 'invalid_sha256',
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
    expect(await errorOf(refused)).toEqual({ status: 400, code: 'invalid_command', reason: 'not_an_image' });
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

describe("the agent's model list through the API (the real binary)", () => {
  const { start } = daemonPerTest();

  it('answers the list GET /v1/providers/claude/models, the client reads it, an unknown provider is 404', async () => {
    const { daemon, api } = await start();
    const response = await api.request('GET', '/v1/providers/claude/models');
    expect(response.status).toBe(200);
    const list = (await response.json()) as ModelList;
    expect(list.provider).toBe('claude');
    expect(list.agentVersion).toMatch(/^\d+\.\d+\.\d+/);
    expect(list.models.length).toBeGreaterThan(0);
    for (const model of list.models) expect(model.id.length).toBeGreaterThan(0);
    expect(list.models.map((model) => model.id)).toContain('default');

    const tether = createTetherClient({ url: daemon.url, token: daemon.token });
    expect(await tether.listModels()).toEqual(list);
    expect(await tether.listModels('claude')).toEqual(list);

    expect(await errorOf(await api.request('GET', '/v1/providers/nope/models'))).toEqual({
      status: 404,
      code: 'route_not_found',
      reason: 'unknown_provider',
    });
    expect((await fetch(`${daemon.url}/v1/providers/claude/models`)).status).toBe(401);
  });
});
