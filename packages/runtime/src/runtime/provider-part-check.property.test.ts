import { eventBodySchema } from '@tether/protocol';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { refusedPartType } from './provider-part-check.js';

// The check's shortcuts (deltas, a run's usage and its end) must refuse exactly what the protocol's
// schema refuses, whatever came before (they remember a run id the schema accepted).

const validRunIds = ['run_0123456789abcdef0123456789abcdef', 'run_ffffffffffffffffffffffffffffffff'];

const anything = fc.oneof(fc.string({ maxLength: 4 }), fc.constant(null), fc.integer(), fc.boolean(), fc.anything());
const mostly = (plausible: fc.Arbitrary<unknown>) =>
  fc.oneof({ weight: 10, arbitrary: plausible }, { weight: 1, arbitrary: anything });
const boundedText = (limit: number) =>
  fc.oneof(
    { weight: 8, arbitrary: fc.string({ minLength: 1, maxLength: 6 }) },
    fc.constantFrom('', 'x'.repeat(limit), 'x'.repeat(limit + 1), `${'x'.repeat(limit - 1)}\u{1F600}`),
  );

/** Drops the fields generated as absent (undefined), keeping them present-but-undefined sometimes. */
function dropSomeAbsent(value: Record<string, unknown>) {
  return fc.boolean().map((keepUndefined) => {
    const entries = Object.entries(value).filter(([, field]) => field !== undefined || keepUndefined);
    return Object.fromEntries(entries);
  });
}

const delta = fc
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
  .chain(dropSomeAbsent);

const count = mostly(
  fc.oneof(
    { weight: 6, arbitrary: fc.nat(10_000) },
    fc.constantFrom(-1, -0, 1.5, Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER + 1, Number.NaN, '3'),
  ),
);

const usage = fc
  .record(
    {
      type: mostly(fc.constant('run.usage')),
      runId: mostly(fc.constantFrom(...validRunIds, 'run_ABC')),
      inputTokens: count,
      outputTokens: count,
      cacheReadTokens: count,
      cacheCreationTokens: count,
      costUsd: mostly(
        fc.oneof(fc.constant(null), fc.double(), fc.constantFrom(0, -0, 0.25, -1, Number.POSITIVE_INFINITY)),
      ),
      extra: fc.oneof({ weight: 10, arbitrary: fc.constant(undefined) }, anything),
    },
    { requiredKeys: ['type'] },
  )
  .chain(dropSomeAbsent);

const completed = fc
  .record(
    {
      type: mostly(fc.constant('run.completed')),
      runId: mostly(fc.constantFrom(...validRunIds, 'run_ABC')),
      outcome: mostly(fc.constantFrom('succeeded', 'failed', 'interrupted', 'cancelled')),
      stopReason: fc.oneof(
        { weight: 3, arbitrary: fc.constant(undefined) },
        mostly(fc.constantFrom('end_turn', 'max_tokens', 'tool_use', 'other', 'END_TURN')),
      ),
      error: fc.oneof(
        { weight: 8, arbitrary: fc.constant(undefined) },
        fc.constant({ code: 'provider_crashed', message: 'It stopped.', retryable: true }),
        anything,
      ),
      extra: fc.oneof({ weight: 10, arbitrary: fc.constant(undefined) }, anything),
    },
    { requiredKeys: ['type'] },
  )
  .chain(dropSomeAbsent);

const agentId = mostly(
  fc.oneof(
    { weight: 6, arbitrary: fc.string({ minLength: 1, maxLength: 8 }) },
    fc.constantFrom('', 'x'.repeat(300), 'x'.repeat(301)),
  ),
);

const checkpointed = fc
  .record(
    {
      type: mostly(fc.constant('run.checkpointed')),
      runId: mostly(fc.constantFrom(...validRunIds, 'run_ABC')),
      providerSessionId: agentId,
      inputMessageId: fc.oneof(fc.constant(null), agentId),
      lastMessageId: fc.oneof(fc.constant(null), agentId),
      extra: fc.oneof({ weight: 10, arbitrary: fc.constant(undefined) }, anything),
    },
    { requiredKeys: ['type'] },
  )
  .chain(dropSomeAbsent);

const checkedTypes = new Set([
  'run.message_delta',
  'run.thinking_delta',
  'run.usage',
  'run.checkpointed',
  'run.completed',
]);

function schemaVerdict(value: Record<string, unknown>): string | null {
  const type = value['type'];
  if (typeof type !== 'string' || !checkedTypes.has(type)) return null;
  return eventBodySchema(type)!.safeParse(value).success ? null : type;
}

const part = fc.oneof({ weight: 2, arbitrary: delta }, usage, checkpointed, completed);

describe("refusedPartType on deltas and a run's usage, checkpoint and end", () => {
  it('refuses exactly what the schema refuses, in any order of parts', () => {
    fc.assert(
      fc.property(fc.array(part, { minLength: 1, maxLength: 12 }), (parts) => {
        for (const value of parts) {
          const type = value['type'];
          if (typeof type !== 'string' || !checkedTypes.has(type)) continue;
          expect(refusedPartType(value)).toBe(schemaVerdict(value));
        }
      }),
      { numRuns: 2500 },
    );
  });

  it("refuses a run's usage or end with a field out of bounds or unknown, after a well-formed part of the same run", () => {
    const runId = validRunIds[1]!;
    const usage = {
      type: 'run.usage',
      runId,
      inputTokens: 1,
      outputTokens: 2,
      cacheReadTokens: 0,
      cacheCreationTokens: 0,
    };
    expect(refusedPartType({ ...usage, costUsd: null })).toBeNull();
    expect(refusedPartType({ ...usage, costUsd: 0.5 })).toBeNull();
    expect(refusedPartType({ ...usage, costUsd: -1 })).toBe('run.usage');
    expect(refusedPartType({ ...usage })).toBe('run.usage');
    expect(refusedPartType({ ...usage, costUsd: null, inputTokens: 1.5 })).toBe('run.usage');
    expect(refusedPartType({ ...usage, costUsd: null, extra: 1 })).toBe('run.usage');
    expect(refusedPartType({ type: 'run.completed', runId, outcome: 'interrupted' })).toBeNull();
    expect(refusedPartType({ type: 'run.completed', runId, outcome: 'succeeded', stopReason: 'end_turn' })).toBeNull();
    expect(refusedPartType({ type: 'run.completed', runId, outcome: 'stopped' })).toBe('run.completed');
    expect(refusedPartType({ type: 'run.completed', runId, outcome: 'succeeded', stopReason: 'done' })).toBe(
      'run.completed',
    );
    expect(refusedPartType({ type: 'run.completed', runId, outcome: 'failed', error: { code: 1 } })).toBe(
      'run.completed',
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
