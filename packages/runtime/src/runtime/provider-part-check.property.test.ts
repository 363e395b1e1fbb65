import { eventBodySchema } from '@tether/protocol';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { refusedPartType } from './provider-part-check.js';

// The check's shortcut for deltas must refuse exactly what the protocol's schema refuses, whatever
// came before (it remembers a run id the schema accepted).

const validRunIds = ['run_0123456789abcdef0123456789abcdef', 'run_ffffffffffffffffffffffffffffffff'];

const anything = fc.oneof(fc.string({ maxLength: 4 }), fc.constant(null), fc.integer(), fc.boolean(), fc.anything());
const mostly = (plausible: fc.Arbitrary<unknown>) =>
  fc.oneof({ weight: 10, arbitrary: plausible }, { weight: 1, arbitrary: anything });
const boundedText = (limit: number) =>
  fc.oneof(
    { weight: 8, arbitrary: fc.string({ minLength: 1, maxLength: 6 }) },
    fc.constantFrom('', 'x'.repeat(limit), 'x'.repeat(limit + 1), `${'x'.repeat(limit - 1)}\u{1F600}`),
  );

const part = fc
  .record(
    {
      type: mostly(fc.constantFrom('run.message_delta', 'run.thinking_delta')),
      runId: mostly(fc.constantFrom(...validRunIds, 'run_ABC', `${validRunIds[0]} `)),
      blockId: mostly(boundedText(300)),
      text: mostly(boundedText(100_000)),
      parentToolUseId: fc.oneof({ weight: 4, arbitrary: fc.constant(undefined) }, mostly(boundedText(300))),
      extra: fc.oneof({ weight: 10, arbitrary: fc.constant(undefined) }, anything),
    },
    { requiredKeys: ['type'] },
  )
  .chain((value) =>
    fc.boolean().map((keepUndefined) => {
      const entries = Object.entries(value).filter(([, field]) => field !== undefined || keepUndefined);
      return Object.fromEntries(entries);
    }),
  );

function schemaVerdict(value: Record<string, unknown>): string | null {
  const type = value['type'];
  if (type !== 'run.message_delta' && type !== 'run.thinking_delta') return null;
  return eventBodySchema(type)!.safeParse(value).success ? null : type;
}

describe('refusedPartType on deltas', () => {
  it('refuses exactly what the schema refuses, in any order of parts', () => {
    fc.assert(
      fc.property(fc.array(part, { minLength: 1, maxLength: 12 }), (parts) => {
        for (const value of parts) {
          const type = value['type'];
          if (type !== 'run.message_delta' && type !== 'run.thinking_delta') continue;
          expect(refusedPartType(value)).toBe(schemaVerdict(value));
        }
      }),
      { numRuns: 1500 },
    );
  });

  it('refuses a delta with an unknown field, or an invalid run id, after a well-formed one of the same run', () => {
    const runId = validRunIds[0]!;
    expect(refusedPartType({ type: 'run.message_delta', runId, blockId: 'm:0', text: 'a' })).toBeNull();
    expect(refusedPartType({ type: 'run.message_delta', runId, blockId: 'm:0', text: 'b', extra: 1 })).toBe(
      'run.message_delta',
    );
    expect(refusedPartType({ type: 'run.message_delta', runId, blockId: '', text: 'b' })).toBe('run.message_delta');
    expect(refusedPartType({ type: 'run.thinking_delta', runId: null, blockId: 'm:0', text: 'b' })).toBe(
      'run.thinking_delta',
    );
    expect(
      refusedPartType(
        JSON.parse(`{"type":"run.message_delta","runId":"${runId}","blockId":"m:0","text":"c","__proto__":{}}`),
      ),
    ).toBe('run.message_delta');
  });
});
