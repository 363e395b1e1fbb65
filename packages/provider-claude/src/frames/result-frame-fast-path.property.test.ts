import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseCliFrame, ResultFrame } from './cli-frame-schemas.js';
import { plainResultFrame } from './result-frame-fast-path.js';

// The fast path must never widen what the schema accepts, nor change what a frame parses to: for
// any value, parseCliFrame answers as the schema alone would.

const anyField = fc.oneof(
  { weight: 3, arbitrary: fc.string({ maxLength: 6 }) },
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

/** Absent (undefined) half the time. */
const optional = (arbitrary: fc.Arbitrary<unknown>) => fc.option(arbitrary, { nil: undefined, freq: 2 });

const nullish = (arbitrary: fc.Arbitrary<unknown>) =>
  optional(mostly(fc.oneof({ weight: 3, arbitrary }, fc.constant(null))));

const number = fc.oneof({ weight: 6, arbitrary: fc.nat(1000) }, fc.double({ min: 0, max: 1 }));
const text = fc.string({ maxLength: 8 });
const texts = fc.array(text, { maxLength: 3 });

function withAbsentKeys(record: Record<string, unknown>, keepUndefined: boolean): Record<string, unknown> {
  return Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined || keepUndefined));
}

const record = <Shape extends Record<string, fc.Arbitrary<unknown>>>(shape: Shape) =>
  fc.record(shape).chain((value) => fc.boolean().map((keep) => withAbsentKeys(value, keep)));

const usage = record({
  input_tokens: nullish(number),
  output_tokens: nullish(number),
  cache_read_input_tokens: nullish(number),
  cache_creation_input_tokens: nullish(number),
  service_tier: optional(anyField),
});

const modelUsage = fc.dictionary(
  fc.constantFrom('claude-opus-5-5', 'claude-haiku', '__proto__', 'constructor'),
  mostly(record({ costUSD: nullish(number), inputTokens: optional(anyField) })),
  { maxKeys: 2 },
);

const resultFrame = record({
  type: mostly(fc.constant('result')),
  subtype: mostly(fc.constantFrom('success', 'error_during_execution', 'error_max_turns')),
  is_error: nullish(fc.boolean()),
  session_id: nullish(text),
  terminal_reason: nullish(text),
  api_error_status: nullish(fc.constantFrom(429, 500, 529)),
  total_cost_usd: nullish(number),
  usage: nullish(usage),
  model_usage_since_last_result: nullish(modelUsage),
  errors: nullish(texts),
  startup_failure_reason: nullish(text),
  num_turns: nullish(fc.nat(5)),
  stop_reason: nullish(fc.constantFrom('end_turn', 'tool_use')),
  result: nullish(text),
  user_message_uuid: nullish(text),
  user_message_uuids: nullish(texts),
  duration_ms: optional(anyField),
  modelUsage: optional(anyField),
});

/** The same value as JSON.parse gives it (what the CLI's stdout becomes), when it survives JSON. */
const asParsedJson = (value: unknown) => {
  const json = JSON.stringify(value);
  return json === undefined ? value : JSON.parse(json);
};

function schemaOnly(value: unknown) {
  const parsed = ResultFrame.safeParse(value);
  return parsed.success ? { kind: 'result', frame: parsed.data } : { kind: 'malformed', type: 'result' };
}

describe('the result frame fast path', () => {
  it('accepts only what the schema accepts, and parses it to what the schema gives', () => {
    let taken = 0;
    fc.assert(
      fc.property(resultFrame, fc.boolean(), (generated, throughJson) => {
        const value = throughJson ? asParsedJson(generated) : generated;
        const fast = plainResultFrame(value as Record<string, unknown>);
        if (fast !== null) taken += 1;
        if (fast !== null) expect(ResultFrame.safeParse(value)).toEqual({ success: true, data: fast });
        if (typeof value === 'object' && value !== null && (value as { type?: unknown }).type === 'result')
          expect(parseCliFrame(value)).toEqual(schemaOnly(value));
      }),
      { numRuns: 3000 },
    );
    // The generated values exercise the fast path itself, not only the fall-through to the schema.
    expect(taken).toBeGreaterThan(100);
  });

  it('takes the result lines the real CLI printed', () => {
    const fixtures = new URL('../__fixtures__/', import.meta.url);
    const lines = ['tool-use-bypass.ndjson', 'api-error-500.ndjson', 'max-tokens-stop.ndjson']
      .flatMap((name) => readFileSync(new URL(name, fixtures), 'utf8').split('\n'))
      .filter((line) => line.includes('"type":"result"'));
    expect(lines.length).toBeGreaterThanOrEqual(3);
    for (const line of lines) {
      const value = JSON.parse(line);
      expect(plainResultFrame(value)).toBe(value);
    }
  });

  it('leaves to the schema a usage whose copy would differ (an own __proto__ key) and refuses what it refuses', () => {
    const withProto = JSON.parse('{"type":"result","subtype":"success","usage":{"__proto__":{"x":1}}}');
    expect(plainResultFrame(withProto)).toBeNull();
    expect(parseCliFrame(withProto)).toEqual(schemaOnly(withProto));
    expect(parseCliFrame({ type: 'result', subtype: 'success', num_turns: '2' })).toEqual({
      kind: 'malformed',
      type: 'result',
    });
    expect(parseCliFrame({ type: 'result' })).toEqual({ kind: 'malformed', type: 'result' });
  });
});
