import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  dropConnectionReply,
  malformedStreamReply,
  startFakeAnthropicApi,
  streamErrorReply,
  textReply,
  thinkingReply,
  toolUseReply,
} from './index.js';
import type { FakeAnthropicApi } from './index.js';
import { messagesBody, postMessages, readSse, readSseUntil } from './http-client.test-helper.js';

let api: FakeAnthropicApi;
beforeEach(async () => {
  api = await startFakeAnthropicApi();
});
afterEach(async () => {
  await api.close();
});

describe('streaming replies (SSE)', () => {
  it('streams a complete text message with the scripted usage and the echoed model', async () => {
    api.enqueue(
      textReply('Hello there, this is split into five parts.', {
        chunks: 5,
        usage: { inputTokens: 123, outputTokens: 45, cacheReadTokens: 7, cacheCreationTokens: 9 },
      }),
    );
    const response = await postMessages(api.url, messagesBody({ model: 'claude-opus-5-5' }));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(response.headers.get('request-id')).toMatch(/^req_/);
    const { events, error } = await readSse(response);
    expect(error).toBeUndefined();
    expect(events.map((e) => e.event)).toEqual([
      'message_start',
      'ping',
      'content_block_start',
      ...Array(5).fill('content_block_delta'),
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    for (const event of events) expect(event.data.type).toBe(event.event);
    const start = events[0]!.data.message;
    expect(start).toMatchObject({
      type: 'message',
      role: 'assistant',
      model: 'claude-opus-5-5',
      content: [],
      stop_reason: null,
    });
    expect(start.id).toMatch(/^msg_/);
    expect(start.usage).toEqual({
      input_tokens: 123,
      cache_creation_input_tokens: 9,
      cache_read_input_tokens: 7,
      output_tokens: 0,
    });
    const deltas = events.filter((e) => e.event === 'content_block_delta').map((e) => e.data.delta);
    expect(deltas.every((d) => d.type === 'text_delta')).toBe(true);
    expect(deltas.map((d) => d.text).join('')).toBe('Hello there, this is split into five parts.');
    const delta = events.find((e) => e.event === 'message_delta')!.data;
    expect(delta.delta).toEqual({ stop_reason: 'end_turn', stop_sequence: null });
    expect(delta.usage).toEqual({ output_tokens: 45 });
  });

  it('defaults to about one text delta per 20 characters', async () => {
    api.enqueue(textReply('x'.repeat(65)));
    const { events } = await readSse(await postMessages(api.url, messagesBody()));
    expect(events.filter((e) => e.event === 'content_block_delta')).toHaveLength(4);
  });

  it('streams thinking with thinking_delta events and one signature_delta', async () => {
    api.enqueue(thinkingReply('Pondering the question.', 'Answer.', { chunks: 3, signature: 'sig-123' }));
    const { events } = await readSse(await postMessages(api.url, messagesBody()));
    const starts = events.filter((e) => e.event === 'content_block_start').map((e) => e.data);
    expect(starts).toEqual([
      { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } },
      { type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } },
    ]);
    const thinkingDeltas = events
      .filter((e) => e.event === 'content_block_delta' && e.data.index === 0)
      .map((e) => e.data.delta);
    expect(thinkingDeltas.map((d) => d.type)).toEqual([
      'thinking_delta',
      'thinking_delta',
      'thinking_delta',
      'signature_delta',
    ]);
    expect(
      thinkingDeltas
        .slice(0, 3)
        .map((d) => d.thinking)
        .join(''),
    ).toBe('Pondering the question.');
    expect(thinkingDeltas[3]).toEqual({ type: 'signature_delta', signature: 'sig-123' });
  });

  it('streams tool_use input as input_json_delta and stops with tool_use; ids are unique', async () => {
    const input = { command: 'echo hi', description: 'Print hi', extra: 'x'.repeat(100) };
    api.enqueue(toolUseReply('Bash', input, { text: 'Running.' }), toolUseReply('Bash', input));
    const first = await readSse(await postMessages(api.url, messagesBody()));
    const second = await readSse(await postMessages(api.url, messagesBody()));
    const block = first.events.find((e) => e.event === 'content_block_start' && e.data.index === 1)!.data.content_block;
    expect(block).toMatchObject({ type: 'tool_use', name: 'Bash', input: {} });
    expect(block.id).toMatch(/^toolu_/);
    const json = first.events
      .filter((e) => e.event === 'content_block_delta' && e.data.index === 1)
      .map((e) => {
        expect(e.data.delta.type).toBe('input_json_delta');
        return e.data.delta.partial_json as string;
      });
    expect(json.length).toBeGreaterThan(1);
    expect(JSON.parse(json.join(''))).toEqual(input);
    expect(first.events.find((e) => e.event === 'message_delta')!.data.delta.stop_reason).toBe('tool_use');
    const secondId = second.events.find((e) => e.event === 'content_block_start')!.data.content_block.id;
    expect(secondId).not.toBe(block.id);
  });

  it('sends the whole tool input in one delta with chunks: 1', async () => {
    api.enqueue(
      toolUseReply(
        'Write',
        { file_path: '/tmp/some/long/path/notes.txt', content: 'hello\n'.repeat(20) },
        { chunks: 1 },
      ),
    );
    const { events } = await readSse(await postMessages(api.url, messagesBody()));
    const deltas = events.filter((e) => e.event === 'content_block_delta');
    expect(deltas).toHaveLength(1);
    expect(JSON.parse(deltas[0]!.data.delta.partial_json).file_path).toBe('/tmp/some/long/path/notes.txt');
  });

  it('sends an SSE error event after message_start for stream_error', async () => {
    api.enqueue(streamErrorReply('overloaded_error'));
    const { events, error } = await readSse(await postMessages(api.url, messagesBody()));
    expect(error).toBeUndefined();
    expect(events.map((e) => e.event)).toEqual(['message_start', 'ping', 'error']);
    expect(events[2]!.data).toMatchObject({ type: 'error', error: { type: 'overloaded_error' } });
    expect(api.requests[0]!.replyKind).toBe('stream_error');
  });

  it('destroys the socket after the given number of deltas for drop_connection', async () => {
    api.enqueue(dropConnectionReply(2));
    const { events, error } = await readSse(await postMessages(api.url, messagesBody()));
    expect(error).toBeDefined();
    expect(events.map((e) => e.event)).toEqual([
      'message_start',
      'ping',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
    ]);
    expect(api.requests[0]!.clientAborted).toBe(false);
  });

  it('drop_connection holdBeforeDrop: the deltas, then the stream stays open until releaseHeld() drops it', async () => {
    api.enqueue(dropConnectionReply(2, { holdBeforeDrop: true }));
    const response = await postMessages(api.url, messagesBody());
    await readSseUntil(response, (event) => event.event === 'content_block_delta');
    // Held from the moment the request is recorded: this release is never lost, nor the stream ended before it.
    expect(api.heldCount).toBe(1);
    api.releaseHeld();
    expect((await readSse(response)).error).toBeDefined();
    expect(api.heldCount).toBe(0);
    expect(api.requests[0]!.clientAborted).toBe(false);
  });

  it('malformed_stream cut_mid_event: one delta, then half an event and a destroyed socket', async () => {
    api.enqueue(malformedStreamReply('cut_mid_event'));
    const response = await postMessages(api.url, messagesBody());
    const { events, error } = await readSse(response);
    expect(error).toBeDefined();
    expect(events.map((e) => e.event)).toEqual(['message_start', 'ping', 'content_block_start', 'content_block_delta']);
    expect(api.requests[0]!.clientAborted).toBe(false);
  });

  it('malformed_stream invalid_json: one delta, then a delta event whose data is not JSON, then the end', async () => {
    api.enqueue(malformedStreamReply('invalid_json'));
    const text = await (await postMessages(api.url, messagesBody())).text();
    const blocks = text.split('\n\n').filter((block) => block.length > 0);
    expect(blocks.map((block) => block.split('\n')[0])).toEqual([
      'event: message_start',
      'event: ping',
      'event: content_block_start',
      'event: content_block_delta',
      'event: content_block_delta',
    ]);
    expect(() => JSON.parse(blocks.at(-1)!.split('\n')[1]!.slice('data: '.length))).toThrow();
  });

  it('waits delayMs between events', async () => {
    api.enqueue({ content: [{ type: 'text', text: 'slow', chunks: 2 }], delayMs: 20 });
    const started = Date.now();
    const { events } = await readSse(await postMessages(api.url, messagesBody()));
    expect(events).toHaveLength(8);
    expect(Date.now() - started).toBeGreaterThanOrEqual(7 * 20 - 10);
  });

  it('hurryPacedReplies() lets a paced reply write the rest at once, a pause in progress included; later replies keep their pace', async () => {
    // Paced like this the reply would need ~4 minutes, past the test's time limit.
    api.enqueue(textReply('slow '.repeat(40), { chunks: 40, delayMs: 5_000 }));
    const response = await postMessages(api.url, messagesBody());
    expect((await readSseUntil(response, (e) => e.event === 'message_start')).map((e) => e.event)).toEqual([
      'message_start',
    ]);
    api.hurryPacedReplies();
    const rest = await readSse(response);
    expect(rest.error).toBeUndefined();
    expect(rest.events.filter((e) => e.event === 'content_block_delta')).toHaveLength(40);
    expect(rest.events.at(-1)!.event).toBe('message_stop');

    api.enqueue({ content: [{ type: 'text', text: 'slow', chunks: 2 }], delayMs: 20 });
    const started = Date.now();
    expect((await readSse(await postMessages(api.url, messagesBody()))).events).toHaveLength(8);
    expect(Date.now() - started).toBeGreaterThanOrEqual(7 * 20 - 10);
  });
});
