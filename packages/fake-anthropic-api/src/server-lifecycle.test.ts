import { Agent, request } from 'node:http';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { holdReply, startFakeAnthropicApi, textReply, VERSION } from './index.js';
import type { FakeAnthropicApi } from './index.js';
import { messagesBody, postMessages, readSse, readSseUntil } from './http-client.test-helper.js';

let api: FakeAnthropicApi;
beforeEach(async () => {
  api = await startFakeAnthropicApi();
});
afterEach(async () => {
  await api.close();
});

describe('server', () => {
  it('listens on 127.0.0.1 at a random port and records requests', async () => {
    expect(VERSION).toBe('0.1.0');
    expect(api.url).toBe(`http://127.0.0.1:${api.port}`);
    expect(api.port).toBeGreaterThan(0);
    await readSse(
      await postMessages(api.url, messagesBody(), {
        headers: { 'content-type': 'application/json', 'x-claude-code-session-id': 'sess-1' },
      }),
    );
    const [recorded] = api.requests;
    expect(recorded).toMatchObject({
      index: 0,
      method: 'POST',
      path: '/v1/messages',
      query: { beta: 'true' },
      kind: 'turn',
      replyKind: 'message',
      unscripted: true,
      clientAborted: false,
    });
    expect(recorded!.headers['x-claude-code-session-id']).toBe('sess-1');
    expect(recorded!.view!.sessionId).toBe('sess-1');
    expect((recorded!.body as any).messages[0].content[0].text).toBe('hello');
  });

  it('starts on a requested port', async () => {
    const probe = await startFakeAnthropicApi();
    const port = probe.port;
    await probe.close();
    const fixed = await startFakeAnthropicApi({ port, responder: () => textReply('from option') });
    try {
      expect(fixed.port).toBe(port);
      const { events } = await readSse(await postMessages(fixed.url, messagesBody()));
      expect(events.find((e) => e.data.delta?.type === 'text_delta')!.data.delta.text).toBe('from option');
    } finally {
      await fixed.close();
    }
  });
});

describe('held streams', () => {
  it('holds a stream open after message_start until releaseHeld() closes the socket', async () => {
    api.enqueue(holdReply());
    const response = await postMessages(api.url, messagesBody());
    const events = await readSseUntil(response, (e) => e.event === 'message_start');
    expect(events.map((e) => e.event)).toEqual(['message_start', 'ping']);
    expect(api.heldCount).toBe(1);
    api.releaseHeld();
    const rest = await readSse(response);
    expect(rest.error).toBeDefined();
    expect(rest.events).toEqual([]);
    expect(api.heldCount).toBe(0);
    expect(api.requests[0]!.clientAborted).toBe(false);
  });

  it('counts a held reply as held once its request is recorded, so a release right after waitForRequests is never lost', async () => {
    api.enqueue(holdReply());
    const answered = postMessages(api.url, messagesBody()).then(readSse);
    await api.waitForRequests(1);
    // At once, before the stream is set up: the release applies when it is.
    expect(api.heldCount).toBe(1);
    api.releaseHeld();
    const rest = await answered;
    expect(rest.error).toBeDefined();
    expect(api.heldCount).toBe(0);
  });

  it('notices a client that aborts a held stream', async () => {
    api.enqueue(holdReply());
    const controller = new AbortController();
    const response = await postMessages(api.url, messagesBody(), { signal: controller.signal });
    await readSseUntil(response, (e) => e.event === 'message_start');
    controller.abort();
    await vi.waitFor(() => expect(api.requests[0]!.clientAborted).toBe(true));
    await vi.waitFor(() => expect(api.heldCount).toBe(0));
    api.enqueue(textReply('still serving'));
    const { events } = await readSse(await postMessages(api.url, messagesBody()));
    expect(events.at(-1)!.event).toBe('message_stop');
  });

  it('stops writing when the client aborts a slow stream', async () => {
    api.enqueue({ content: [{ type: 'text', text: 'a slow reply in many parts', chunks: 20 }], delayMs: 30 });
    const controller = new AbortController();
    const response = await postMessages(api.url, messagesBody(), { signal: controller.signal });
    await readSseUntil(response, (e) => e.event === 'content_block_delta');
    controller.abort();
    await vi.waitFor(() => expect(api.requests[0]!.clientAborted).toBe(true));
  });

  it('holds a non-streaming request without answering until released', async () => {
    api.enqueue(holdReply());
    const pending = postMessages(api.url, messagesBody({ stream: false })).then(
      () => 'answered',
      () => 'failed',
    );
    await api.waitForRequests(1);
    await vi.waitFor(() => expect(api.heldCount).toBe(1));
    api.releaseHeld();
    expect(await pending).toBe('failed');
  });
});

describe('close()', () => {
  it('does not hang on held streams or idle keep-alive connections', async () => {
    api.enqueue(textReply('done'), holdReply());
    // An idle keep-alive connection (node:http agent with keepAlive).
    await new Promise<void>((resolve, reject) => {
      const req = request(
        `${api.url}/v1/messages`,
        { method: 'POST', agent: new Agent({ keepAlive: true }) },
        (res) => {
          res.resume();
          res.on('end', () => resolve());
        },
      );
      req.on('error', reject);
      req.end(JSON.stringify(messagesBody()));
    });
    const held = await postMessages(api.url, messagesBody());
    await readSseUntil(held, (e) => e.event === 'message_start');
    const waiting = api.waitForRequests(99);
    await api.close();
    await expect(waiting).rejects.toThrow(/closed/);
    expect((await readSse(held)).error).toBeDefined();
  });
});

describe('waitForRequests()', () => {
  it('resolves with the matching requests, filtered by kind', async () => {
    const waiting = api.waitForRequests(2, { kind: 'turn' });
    await fetch(`${api.url}/v1/messages/count_tokens`, { method: 'POST', body: '{}' });
    await readSse(await postMessages(api.url, messagesBody()));
    await readSse(await postMessages(api.url, messagesBody()));
    const turns = await waiting;
    expect(turns.map((r) => r.index)).toEqual([1, 2]);
    expect(await api.waitForRequests(1, { kind: 'count_tokens' })).toHaveLength(1);
  });

  it('rejects with a clear error on timeout', async () => {
    await fetch(`${api.url}/nowhere`);
    await expect(api.waitForRequests(2, { kind: 'turn', timeoutMs: 50 })).rejects.toThrow(
      "fake anthropic api: waited 50 ms for 2 'turn' request(s) but only 0 arrived (all requests so far: GET /nowhere [other])",
    );
  });
});
