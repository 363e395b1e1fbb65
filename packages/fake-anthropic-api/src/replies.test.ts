import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  COMPACTION_TEXT,
  errorReply,
  startFakeAnthropicApi,
  textReply,
  thinkingReply,
  toolUseReply,
  UNSCRIPTED_TEXT,
} from './index.js';
import type { FakeAnthropicApi, FakeRequestView } from './index.js';
import { messagesBody, postMessages, readSse } from './http-client.test-helper.js';

let api: FakeAnthropicApi;
beforeEach(async () => {
  api = await startFakeAnthropicApi();
});
afterEach(async () => {
  await api.close();
});

async function replyText(body: Record<string, unknown>): Promise<string> {
  const response = await postMessages(api.url, body);
  if (body.stream !== true) return ((await response.json()) as any).content.map((b: any) => b.text ?? '').join('');
  const { events } = await readSse(response);
  return events
    .filter((e) => e.data.delta?.type === 'text_delta')
    .map((e) => e.data.delta.text)
    .join('');
}

describe('non-streaming replies', () => {
  it('answers stream:false (or no stream) with a JSON Message object', async () => {
    api.enqueue({
      content: [
        { type: 'thinking', thinking: 'hmm', signature: 'sig' },
        { type: 'text', text: 'plain' },
        { type: 'tool_use', name: 'Read', input: { file_path: '/x' }, id: 'toolu_fixed' },
      ],
      usage: { inputTokens: 5, outputTokens: 6 },
    });
    const response = await postMessages(api.url, messagesBody({ stream: undefined, model: 'm-1' }));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(response.headers.get('request-id')).toMatch(/^req_/);
    const message = (await response.json()) as any;
    expect(message).toMatchObject({
      type: 'message',
      role: 'assistant',
      model: 'm-1',
      content: [
        { type: 'thinking', thinking: 'hmm', signature: 'sig' },
        { type: 'text', text: 'plain' },
        { type: 'tool_use', id: 'toolu_fixed', name: 'Read', input: { file_path: '/x' } },
      ],
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: { input_tokens: 5, output_tokens: 6, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 },
    });
    expect(api.requests[0]!.kind).toBe('non_streaming');
  });
});

describe('errors', () => {
  it.each([
    [400, 'invalid_request_error'],
    [401, 'authentication_error'],
    [429, 'rate_limit_error'],
    [500, 'api_error'],
    [529, 'overloaded_error'],
  ])('answers %i with an Anthropic error body of type %s', async (status, type) => {
    api.enqueue(errorReply(status));
    const response = await postMessages(api.url, messagesBody());
    expect(response.status).toBe(status);
    const body = (await response.json()) as any;
    expect(body).toMatchObject({ type: 'error', error: { type } });
    expect(typeof body.error.message).toBe('string');
    expect(body.request_id).toBe(response.headers.get('request-id'));
    expect(response.headers.get('retry-after')).toBe(status === 429 ? '1' : null);
  });

  it('uses the scripted type, message and retry-after', async () => {
    api.enqueue(errorReply(503, { errorType: 'custom_error', message: 'nope', retryAfterSeconds: 7 }));
    const response = await postMessages(api.url, messagesBody());
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('7');
    expect(((await response.json()) as any).error).toEqual({ type: 'custom_error', message: 'nope' });
  });

  it('answers unknown routes with 404 and invalid JSON with 400', async () => {
    const notFound = await fetch(`${api.url}/v1/models`);
    expect(notFound.status).toBe(404);
    expect(((await notFound.json()) as any).error.type).toBe('not_found_error');
    const bad = await fetch(`${api.url}/v1/messages`, { method: 'POST', body: '{not json' });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as any).error.type).toBe('invalid_request_error');
    expect(api.requests.map((r) => [r.kind, r.replyKind])).toEqual([
      ['other', 'not_found'],
      ['other', 'bad_request'],
    ]);
  });
});

describe('choosing a reply', () => {
  it('uses the queue first, then the responder, then the unscripted default', async () => {
    const seen: FakeRequestView[] = [];
    api.setResponder((view) => {
      seen.push(view);
      return view.lastUserText === 'ask the responder' ? textReply('from responder') : undefined;
    });
    api.enqueue(textReply('queued 1'), textReply('queued 2'));
    expect(api.queued).toBe(2);
    const user = (text: string) => messagesBody({ messages: [{ role: 'user', content: text }] });
    expect(await replyText(user('ask the responder'))).toBe('queued 1');
    expect(await replyText(user('ask the responder'))).toBe('queued 2');
    expect(await replyText(user('ask the responder'))).toBe('from responder');
    expect(await replyText(user('something else'))).toBe(UNSCRIPTED_TEXT);
    expect(api.requests.map((r) => r.unscripted)).toEqual([false, false, false, true]);
    expect(seen).toHaveLength(2);
    api.setResponder(undefined);
    expect(await replyText(user('ask the responder'))).toBe(UNSCRIPTED_TEXT);
  });

  it('reads the last user message (not the last element), its text blocks and tool results', async () => {
    let view: FakeRequestView | undefined;
    api.setResponder((v) => {
      view = v;
      return textReply('ok');
    });
    await replyText(
      messagesBody({
        messages: [
          { role: 'user', content: 'first prompt' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_a', name: 'Bash', input: {} }] },
          {
            role: 'user',
            content: [
              { type: 'tool_result', tool_use_id: 'toolu_a', content: 'plain output' },
              {
                type: 'tool_result',
                tool_use_id: 'toolu_b',
                content: [
                  { type: 'text', text: 'line 1' },
                  { type: 'text', text: 'line 2' },
                ],
                is_error: true,
              },
              { type: 'text', text: '<system-reminder>x</system-reminder>' },
              { type: 'text', text: 'and more', cache_control: { type: 'ephemeral' } },
            ],
          },
          { role: 'system', content: 'You are powered by the model named X.' },
        ],
      }),
    );
    expect(view).toBeDefined();
    expect(view!.lastUserText).toBe('<system-reminder>x</system-reminder>\nand more');
    expect(view!.toolResults).toEqual([
      { toolUseId: 'toolu_a', content: 'plain output', isError: false },
      { toolUseId: 'toolu_b', content: 'line 1\nline 2', isError: true },
    ]);
    expect(view!.streaming).toBe(true);
    expect(view!.model).toBe('claude-test-model');
    expect(view!.isCompaction).toBe(false);
    expect(view!.isSubagent).toBe(false);
    expect(view!.headers['x-api-key']).toBe('sk-test');
  });

  it('answers a throwing responder with a 500 naming the error', async () => {
    api.setResponder(() => {
      throw new Error('boom');
    });
    const response = await postMessages(api.url, messagesBody());
    expect(response.status).toBe(500);
    expect(((await response.json()) as any).error.message).toContain('boom');
  });
});

describe('automatic answers that leave the queue alone', () => {
  it('answers count_tokens, the max_tokens:1 probe and compaction without consuming the queue', async () => {
    api.enqueue(textReply('still queued'));
    const count = await fetch(`${api.url}/v1/messages/count_tokens?beta=true`, {
      method: 'POST',
      body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(count.status).toBe(200);
    const counted = (await count.json()) as any;
    expect(Object.keys(counted)).toEqual(['input_tokens']);
    expect(counted.input_tokens).toBeGreaterThan(0);

    const probe = await postMessages(api.url, {
      model: 'claude-x',
      max_tokens: 1,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }],
    });
    expect((await probe.json()) as any).toMatchObject({
      type: 'message',
      model: 'claude-x',
      content: [{ type: 'text' }],
    });

    const compaction =
      'Your task is to create a detailed summary of the conversation so far. Respond with plain text only — an <analysis> block followed by a <summary> block.';
    expect(await replyText(messagesBody({ messages: [{ role: 'user', content: compaction }] }))).toBe(COMPACTION_TEXT);

    expect(api.queued).toBe(1);
    expect(api.requests.map((r) => r.kind)).toEqual(['count_tokens', 'probe', 'compaction']);
    expect(await replyText(messagesBody())).toBe('still queued');
  });

  it('lets a responder answer compaction requests', async () => {
    api.setResponder((view) =>
      view.isCompaction ? textReply('<analysis>a</analysis><summary>custom</summary>') : undefined,
    );
    const text = await replyText(
      messagesBody({
        messages: [{ role: 'user', content: 'Reply with an <analysis> block and then a <summary> block.' }],
      }),
    );
    expect(text).toBe('<analysis>a</analysis><summary>custom</summary>');
  });

  it('builds thinking replies for non-streaming requests too', async () => {
    api.enqueue(thinkingReply('t', 'answer'));
    expect(await replyText(messagesBody({ stream: false }))).toBe('answer');
  });

  it('marks a tool_use reply with the tool_use stop reason when non-streaming', async () => {
    api.enqueue(toolUseReply('Bash', { command: 'ls' }));
    const message = (await (await postMessages(api.url, messagesBody({ stream: false }))).json()) as any;
    expect(message.stop_reason).toBe('tool_use');
    expect(message.content[0].id).toMatch(/^toolu_/);
  });
});

describe('response headers', () => {
  it("adds a message reply's headers to the SSE and the JSON answer, never over the fake's own", async () => {
    const headers = { 'anthropic-ratelimit-unified-status': 'allowed_warning', 'content-type': 'text/plain' };
    api.enqueue(textReply('streamed', { headers }), textReply('plain', { headers }));
    const streamed = await postMessages(api.url, messagesBody({ stream: true }));
    expect(streamed.headers.get('anthropic-ratelimit-unified-status')).toBe('allowed_warning');
    expect(streamed.headers.get('content-type')).toContain('text/event-stream');
    await readSse(streamed);
    const plain = await postMessages(api.url, messagesBody({ stream: undefined }));
    expect(plain.headers.get('anthropic-ratelimit-unified-status')).toBe('allowed_warning');
    expect(plain.headers.get('content-type')).toBe('application/json');
    expect(((await plain.json()) as { content: { text: string }[] }).content[0]!.text).toBe('plain');
  });

  it("adds an error reply's headers to its answer, never over the fake's own", async () => {
    const headers = { 'anthropic-ratelimit-unified-status': 'rejected', 'x-should-retry': 'maybe' };
    api.enqueue(errorReply(429, { headers }));
    const refused = await postMessages(api.url, messagesBody({ stream: true }));
    expect(refused.status).toBe(429);
    expect(refused.headers.get('anthropic-ratelimit-unified-status')).toBe('rejected');
    expect(refused.headers.get('x-should-retry')).toBe('true');
    expect(refused.headers.get('retry-after')).toBe('1');
  });
});
