import type { FakeBlock, FakeErrorReply, FakeMessageReply, FakeReply, FakeUsage } from './types.js';

/** A text-only assistant message. */
export function textReply(
  text: string,
  options: { chunks?: number; usage?: Partial<FakeUsage>; delayMs?: number; headers?: Record<string, string> } = {},
): FakeReply {
  const block: FakeBlock =
    options.chunks === undefined ? { type: 'text', text } : { type: 'text', text, chunks: options.chunks };
  const reply: FakeMessageReply = { kind: 'message', content: [block] };
  if (options.headers !== undefined) reply.headers = options.headers;
  return withOptional(reply, options.usage, options.delayMs);
}

/** An assistant message that calls one tool (optionally after some text); stop_reason `tool_use`. */
export function toolUseReply(
  name: string,
  input: Record<string, unknown>,
  options: { text?: string; id?: string; chunks?: number; usage?: Partial<FakeUsage> } = {},
): FakeReply {
  const content: FakeBlock[] = [];
  if (options.text !== undefined) content.push({ type: 'text', text: options.text });
  const block: FakeBlock = { type: 'tool_use', name, input };
  if (options.id !== undefined) block.id = options.id;
  if (options.chunks !== undefined) block.chunks = options.chunks;
  content.push(block);
  return withOptional({ kind: 'message', content }, options.usage, undefined);
}

/** A thinking block followed by a text block. */
export function thinkingReply(
  thinking: string,
  text: string,
  options: { chunks?: number; signature?: string; usage?: Partial<FakeUsage> } = {},
): FakeReply {
  const block: FakeBlock = { type: 'thinking', thinking };
  if (options.chunks !== undefined) block.chunks = options.chunks;
  if (options.signature !== undefined) block.signature = options.signature;
  return withOptional({ kind: 'message', content: [block, { type: 'text', text }] }, options.usage, undefined);
}

/** An HTTP error reply; the error type defaults from the status. */
export function errorReply(
  status: number,
  options: { errorType?: string; message?: string; retryAfterSeconds?: number; headers?: Record<string, string> } = {},
): FakeReply {
  const reply: FakeErrorReply = { kind: 'error', status };
  if (options.headers !== undefined) reply.headers = options.headers;
  if (options.errorType !== undefined) reply.errorType = options.errorType;
  if (options.message !== undefined) reply.message = options.message;
  if (options.retryAfterSeconds !== undefined) reply.retryAfterSeconds = options.retryAfterSeconds;
  return reply;
}

/** `message_start`, then nothing until the client disconnects or `releaseHeld()`. */
export function holdReply(): FakeReply {
  return { kind: 'hold' };
}

/** Destroys the socket after `afterDeltas` content deltas (holdBeforeDrop: once `releaseHeld()` is called). */
export function dropConnectionReply(afterDeltas = 0, options: { holdBeforeDrop?: boolean } = {}): FakeReply {
  return options.holdBeforeDrop === true
    ? { kind: 'drop_connection', afterDeltas, holdBeforeDrop: true }
    : { kind: 'drop_connection', afterDeltas };
}

/** An SSE `event: error` after `message_start`. */
export function streamErrorReply(errorType = 'overloaded_error'): FakeReply {
  return { kind: 'stream_error', errorType };
}

/** `message_start` and a delta, then an event cut off mid-way (socket destroyed) or one whose data is not JSON. */
export function malformedStreamReply(variant: 'cut_mid_event' | 'invalid_json'): FakeReply {
  return { kind: 'malformed_stream', variant };
}

function withOptional(
  reply: FakeMessageReply,
  usage: Partial<FakeUsage> | undefined,
  delayMs: number | undefined,
): FakeReply {
  if (usage !== undefined) reply.usage = usage;
  if (delayMs !== undefined) reply.delayMs = delayMs;
  return reply;
}
