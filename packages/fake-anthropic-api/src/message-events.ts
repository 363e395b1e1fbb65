/** Turns a scripted message into Anthropic SSE events or a JSON Message object (pure functions). */
import { newMessageId, newSignature, newToolUseId } from './ids.js';
import type { FakeMessageReply, FakeUsage } from './types.js';

export interface SseEvent {
  event: string;
  data: Record<string, unknown>;
}

export type ResolvedBlock =
  | { type: 'text'; text: string; chunks: number }
  | { type: 'thinking'; thinking: string; chunks: number; signature: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown>; chunks: number };

/** A scripted message with every default filled in (ids, chunk counts, usage, stop reason). */
export interface ResolvedMessage {
  id: string;
  model: string;
  blocks: ResolvedBlock[];
  stopReason: 'end_turn' | 'tool_use' | 'max_tokens';
  usage: FakeUsage;
}

/** Default input tokens when a reply does not script them. */
export const DEFAULT_INPUT_TOKENS = 10;

export function resolveMessage(reply: FakeMessageReply, model: string): ResolvedMessage {
  const blocks: ResolvedBlock[] = reply.content.map((block) => {
    switch (block.type) {
      case 'text':
        return { type: 'text', text: block.text, chunks: block.chunks ?? defaultChunks(block.text) };
      case 'thinking':
        return {
          type: 'thinking',
          thinking: block.thinking,
          chunks: block.chunks ?? defaultChunks(block.thinking),
          signature: block.signature ?? newSignature(),
        };
      case 'tool_use':
        return {
          type: 'tool_use',
          id: block.id ?? newToolUseId(),
          name: block.name,
          input: block.input,
          chunks: block.chunks ?? defaultJsonChunks(block.input),
        };
    }
  });
  const hasToolUse = blocks.some((block) => block.type === 'tool_use');
  const usage: FakeUsage = {
    inputTokens: reply.usage?.inputTokens ?? DEFAULT_INPUT_TOKENS,
    outputTokens: reply.usage?.outputTokens ?? estimateOutputTokens(blocks),
    cacheReadTokens: reply.usage?.cacheReadTokens ?? 0,
    cacheCreationTokens: reply.usage?.cacheCreationTokens ?? 0,
  };
  return {
    id: newMessageId(),
    model,
    blocks,
    stopReason: reply.stopReason ?? (hasToolUse ? 'tool_use' : 'end_turn'),
    usage,
  };
}

/** `message_start` (input and cache tokens as scripted; output_tokens 0 — the final count comes in `message_delta`). */
export function messageStartEvent(message: ResolvedMessage): SseEvent {
  return {
    event: 'message_start',
    data: {
      type: 'message_start',
      message: {
        id: message.id,
        type: 'message',
        role: 'assistant',
        model: message.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: {
          input_tokens: message.usage.inputTokens,
          cache_creation_input_tokens: message.usage.cacheCreationTokens,
          cache_read_input_tokens: message.usage.cacheReadTokens,
          output_tokens: 0,
        },
      },
    },
  };
}

export const PING_EVENT: SseEvent = { event: 'ping', data: { type: 'ping' } };

/** content_block_start, the deltas and content_block_stop of one block. */
export function blockEvents(block: ResolvedBlock, index: number): SseEvent[] {
  const events: SseEvent[] = [];
  const delta = (payload: Record<string, unknown>): void => {
    events.push({ event: 'content_block_delta', data: { type: 'content_block_delta', index, delta: payload } });
  };
  switch (block.type) {
    case 'text':
      events.push(blockStart(index, { type: 'text', text: '' }));
      for (const piece of splitText(block.text, block.chunks)) delta({ type: 'text_delta', text: piece });
      break;
    case 'thinking':
      events.push(blockStart(index, { type: 'thinking', thinking: '', signature: '' }));
      for (const piece of splitText(block.thinking, block.chunks)) delta({ type: 'thinking_delta', thinking: piece });
      delta({ type: 'signature_delta', signature: block.signature });
      break;
    case 'tool_use': {
      events.push(blockStart(index, { type: 'tool_use', id: block.id, name: block.name, input: {} }));
      for (const piece of splitText(JSON.stringify(block.input), block.chunks))
        delta({ type: 'input_json_delta', partial_json: piece });
      break;
    }
  }
  events.push({ event: 'content_block_stop', data: { type: 'content_block_stop', index } });
  return events;
}

export function messageDeltaEvent(message: ResolvedMessage): SseEvent {
  return {
    event: 'message_delta',
    data: {
      type: 'message_delta',
      delta: { stop_reason: message.stopReason, stop_sequence: null },
      usage: { output_tokens: message.usage.outputTokens },
    },
  };
}

export const MESSAGE_STOP_EVENT: SseEvent = { event: 'message_stop', data: { type: 'message_stop' } };

/** The complete SSE sequence of a message: message_start, ping, blocks, message_delta, message_stop. */
export function messageEvents(message: ResolvedMessage): SseEvent[] {
  return [
    messageStartEvent(message),
    PING_EVENT,
    ...message.blocks.flatMap((block, index) => blockEvents(block, index)),
    messageDeltaEvent(message),
    MESSAGE_STOP_EVENT,
  ];
}

/** The non-streaming Message object. */
export function messageJson(message: ResolvedMessage): Record<string, unknown> {
  return {
    id: message.id,
    type: 'message',
    role: 'assistant',
    model: message.model,
    content: message.blocks.map((block) => {
      switch (block.type) {
        case 'text':
          return { type: 'text', text: block.text };
        case 'thinking':
          return { type: 'thinking', thinking: block.thinking, signature: block.signature };
        case 'tool_use':
          return { type: 'tool_use', id: block.id, name: block.name, input: block.input };
      }
    }),
    stop_reason: message.stopReason,
    stop_sequence: null,
    usage: {
      input_tokens: message.usage.inputTokens,
      cache_creation_input_tokens: message.usage.cacheCreationTokens,
      cache_read_input_tokens: message.usage.cacheReadTokens,
      output_tokens: message.usage.outputTokens,
    },
  };
}

/** `event: X\ndata: {json}\n\n`. */
export function formatSse(event: SseEvent): string {
  return `event: ${event.event}\ndata: ${JSON.stringify(event.data)}\n\n`;
}

/** Splits text into `chunks` pieces of near-equal length (by code point; fewer when the text is shorter). */
export function splitText(text: string, chunks: number): string[] {
  const points = Array.from(text);
  if (points.length === 0) return [];
  const count = Math.max(1, Math.min(Math.floor(chunks), points.length));
  const pieces: string[] = [];
  for (let i = 0; i < count; i++) {
    pieces.push(
      points.slice(Math.floor((i * points.length) / count), Math.floor(((i + 1) * points.length) / count)).join(''),
    );
  }
  return pieces;
}

function defaultChunks(text: string): number {
  return Math.max(1, Math.ceil(Array.from(text).length / 20));
}

function defaultJsonChunks(input: Record<string, unknown>): number {
  return Math.min(3, Math.max(1, Math.ceil(JSON.stringify(input).length / 40)));
}

function estimateOutputTokens(blocks: ResolvedBlock[]): number {
  let chars = 0;
  for (const block of blocks) {
    if (block.type === 'text') chars += block.text.length;
    else if (block.type === 'thinking') chars += block.thinking.length;
    else chars += JSON.stringify(block.input).length + block.name.length;
  }
  return Math.max(1, Math.ceil(chars / 4));
}

function blockStart(index: number, contentBlock: Record<string, unknown>): SseEvent {
  return { event: 'content_block_start', data: { type: 'content_block_start', index, content_block: contentBlock } };
}
