import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseCliFrame, StreamEventFrame } from './cli-frame-schemas.js';
import { plainStreamEvent } from './stream-event-fast-path.js';

// The fast path must never widen what the schema accepts, nor change what a frame parses to: for
// any value, parseCliFrame answers as the schema alone would.

/** A value of any kind a field might hold, the plausible ones most often. */
const anyField = fc.oneof(
  { weight: 4, arbitrary: fc.string({ maxLength: 8 }) },
  { weight: 2, arbitrary: fc.constant(null) },
  { weight: 2, arbitrary: fc.constant(undefined) },
  fc.double(),
  fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, 0, -1, 1.5),
  fc.boolean(),
  fc.array(fc.string({ maxLength: 4 }), { maxLength: 2 }),
  fc.array(fc.anything(), { maxLength: 2 }),
  fc.dictionary(fc.string({ maxLength: 4 }), fc.jsonValue(), { maxKeys: 2 }),
  fc.anything(),
);

/** Mostly a plausible value, sometimes anything at all. */
const mostly = (plausible: fc.Arbitrary<unknown>) =>
  fc.oneof({ weight: 12, arbitrary: plausible }, { weight: 1, arbitrary: anyField });

/** Usually absent (undefined): what the CLI leaves out of a delta's frame. */
const rarely = (arbitrary: fc.Arbitrary<unknown>) =>
  fc.oneof({ weight: 6, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: arbitrary });

/** Absent (undefined) half the time. */
const optional = (arbitrary: fc.Arbitrary<unknown>) => fc.option(arbitrary, { nil: undefined, freq: 2 });

const nullishText = fc.oneof(fc.string({ maxLength: 8 }), fc.constant(null), fc.constant(undefined));

/** Drops the keys whose generated value is "absent" (undefined), keeping them present-but-undefined sometimes. */
function withAbsentKeys(record: Record<string, unknown>, keepUndefined: boolean): Record<string, unknown> {
  return Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined || keepUndefined));
}

const record = <Shape extends Record<string, fc.Arbitrary<unknown>>>(shape: Shape) =>
  fc.record(shape).chain((value) => fc.boolean().map((keep) => withAbsentKeys(value, keep)));

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

/** The same value as JSON.parse gives it (what the CLI's stdout becomes), when it survives JSON. */
const asParsedJson = (value: unknown) => {
  const text = JSON.stringify(value);
  return text === undefined ? value : JSON.parse(text);
};

function schemaOnly(value: unknown) {
  const parsed = StreamEventFrame.safeParse(value);
  return parsed.success ? { kind: 'stream_event', frame: parsed.data } : { kind: 'malformed', type: 'stream_event' };
}

describe('the stream_event fast path', () => {
  it('accepts only what the schema accepts, and parses it to what the schema gives', () => {
    let taken = 0;
    fc.assert(
      fc.property(streamEvent, fc.boolean(), (generated, throughJson) => {
        const value = throughJson ? asParsedJson(generated) : generated;
        const fast = plainStreamEvent(value as Record<string, unknown>);
        if (fast !== null) taken += 1;
        if (fast !== null) expect(StreamEventFrame.safeParse(value)).toEqual({ success: true, data: fast });
        if (typeof value === 'object' && value !== null && (value as { type?: unknown }).type === 'stream_event')
          expect(parseCliFrame(value)).toEqual(schemaOnly(value));
      }),
      { numRuns: 3000 },
    );
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
