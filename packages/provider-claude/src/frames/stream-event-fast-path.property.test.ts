import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseCliFrame, StreamEventFrame } from './cli-frame-schemas.js';
import {
  anyField,
  holdFastPathToSchema,
  mostly,
  optional,
  parsedBySchemaAlone,
  record,
} from './frame-arbitraries.test-helper.js';
import { plainStreamEvent } from './stream-event-fast-path.js';

/** Usually absent (undefined): what the CLI leaves out of a delta's frame. */
const rarely = (arbitrary: fc.Arbitrary<unknown>) =>
  fc.oneof({ weight: 6, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: arbitrary });

const nullishText = fc.oneof(fc.string({ maxLength: 8 }), fc.constant(null), fc.constant(undefined));

const delta = mostly(
  record({
    type: mostly(fc.constantFrom('text_delta', 'thinking_delta', 'input_json_delta', null)),
    text: optional(mostly(nullishText)),
    thinking: optional(mostly(nullishText)),
    stop_reason: optional(mostly(nullishText)),
    partial_json: optional(anyField),
  }),
);

const event = mostly(
  record({
    type: mostly(fc.constantFrom('content_block_delta', 'message_delta', 'content_block_stop')),
    index: optional(
      fc.oneof(
        { weight: 6, arbitrary: fc.nat(5) },
        fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, -0, 1.5, '1', true, null),
        anyField,
      ),
    ),
    delta: optional(delta),
    message: rarely(fc.oneof(fc.record({ id: anyField }), anyField)),
    content_block: rarely(fc.oneof(fc.record({ type: anyField }), anyField)),
    usage: optional(anyField),
  }),
);

const streamEvent = record({
  type: mostly(fc.constant('stream_event')),
  event: fc.option(event, { nil: undefined, freq: 12 }),
  parent_tool_use_id: optional(mostly(nullishText)),
  user_message_uuid: optional(mostly(nullishText)),
  user_message_uuids: rarely(fc.oneof(fc.array(fc.string({ maxLength: 4 }), { maxLength: 2 }), anyField)),
  session_id: optional(anyField),
  uuid: optional(anyField),
});

const schemaOnly = (value: unknown) => parsedBySchemaAlone(value, 'stream_event', StreamEventFrame);

describe('the stream_event fast path', () => {
  it('accepts only what the schema accepts, and parses it to what the schema gives', () => {
    const taken = holdFastPathToSchema(streamEvent, 'stream_event', StreamEventFrame, plainStreamEvent);
    // The generated values exercise the fast path itself, not only the fall-through to the schema.
    expect(taken).toBeGreaterThan(300);
  });

  it('takes the text deltas the CLI streams', () => {
    const line =
      '{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Reading the"}},"session_id":"e8734206-6ab8-4362-9457-aa664b068c1e","parent_tool_use_id":null,"uuid":"11980adc-308b-4ecc-b45b-5c1bc3ff7d7f","api_message_id":"msg_01"}';
    const value = JSON.parse(line);
    expect(plainStreamEvent(value)).toBe(value);
  });

  it('leaves to the schema a value whose copy would differ (an own __proto__ key) and refuses what it refuses', () => {
    const withProto = JSON.parse(
      '{"type":"stream_event","event":{"type":"content_block_delta","__proto__":{"x":1},"delta":{"type":"text_delta","text":"a"}}}',
    );
    expect(plainStreamEvent(withProto)).toBeNull();
    expect(parseCliFrame(withProto)).toEqual(schemaOnly(withProto));
    const badIndex = { type: 'stream_event', event: { type: 'content_block_delta', index: 'one' } };
    expect(parseCliFrame(badIndex)).toEqual({ kind: 'malformed', type: 'stream_event' });
  });
});
