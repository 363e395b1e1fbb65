import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseCliFrame, ResultFrame } from './cli-frame-schemas.js';
import {
  anyField,
  holdFastPathToSchema,
  mostly,
  optional,
  parsedBySchemaAlone,
  record,
} from './frame-arbitraries.test-helper.js';
import { plainResultFrame } from './result-frame-fast-path.js';

const nullish = (arbitrary: fc.Arbitrary<unknown>) =>
  optional(mostly(fc.oneof({ weight: 3, arbitrary }, fc.constant(null))));

const number = fc.oneof({ weight: 6, arbitrary: fc.nat(1000) }, fc.double({ min: 0, max: 1 }));
const text = fc.string({ maxLength: 8 });
const texts = fc.array(text, { maxLength: 3 });

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

const schemaOnly = (value: unknown) => parsedBySchemaAlone(value, 'result', ResultFrame);

describe('the result frame fast path', () => {
  it('accepts only what the schema accepts, and parses it to what the schema gives', () => {
    const taken = holdFastPathToSchema(resultFrame, 'result', ResultFrame, plainResultFrame);
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
