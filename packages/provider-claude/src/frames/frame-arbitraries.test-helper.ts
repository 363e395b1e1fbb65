import fc from 'fast-check';
import { expect } from 'vitest';
import { type CliFrame, parseCliFrame } from './cli-frame-schemas.js';

/**
 * What the frames' fast-path property tests generate values from, and how they hold a fast path to
 * its schema: it must never widen what the schema accepts, nor change what a frame parses to.
 */

/** A value of any kind a field might hold, the plausible ones most often. */
export const anyField = fc.oneof(
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
export const mostly = (plausible: fc.Arbitrary<unknown>) =>
  fc.oneof({ weight: 12, arbitrary: plausible }, { weight: 1, arbitrary: anyField });

/** Absent (undefined) half the time. */
export const optional = (arbitrary: fc.Arbitrary<unknown>) => fc.option(arbitrary, { nil: undefined, freq: 2 });

/** Drops the keys whose generated value is "absent" (undefined), keeping them present-but-undefined sometimes. */
function withAbsentKeys(record: Record<string, unknown>, keepUndefined: boolean): Record<string, unknown> {
  return Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined || keepUndefined));
}

export const record = <Shape extends Record<string, fc.Arbitrary<unknown>>>(shape: Shape) =>
  fc.record(shape).chain((value) => fc.boolean().map((keep) => withAbsentKeys(value, keep)));

/** The same value as JSON.parse gives it (what the CLI's stdout becomes), when it survives JSON. */
const asParsedJson = (value: unknown) => {
  const text = JSON.stringify(value);
  return text === undefined ? value : JSON.parse(text);
};

interface FrameSchema {
  safeParse(value: unknown): { success: boolean; data?: unknown };
}

/** What parseCliFrame would answer for `value` with the schema alone. */
export function parsedBySchemaAlone(value: unknown, type: CliFrame['kind'], schema: FrameSchema) {
  const parsed = schema.safeParse(value);
  return parsed.success ? { kind: type, frame: parsed.data } : { kind: 'malformed', type };
}

/**
 * Runs `frames` (each also as it comes back from JSON) through `fastPath`: whatever it takes, the
 * schema accepts and parses to an equal value, and parseCliFrame answers as the schema alone.
 * Returns how many it took, so a test can see the fast path itself was exercised.
 */
export function holdFastPathToSchema(
  frames: fc.Arbitrary<Record<string, unknown>>,
  type: CliFrame['kind'],
  schema: FrameSchema,
  fastPath: (value: Record<string, unknown>) => unknown,
): number {
  let taken = 0;
  fc.assert(
    fc.property(frames, fc.boolean(), (generated, throughJson) => {
      const value = throughJson ? asParsedJson(generated) : generated;
      const fast = fastPath(value as Record<string, unknown>);
      if (fast !== null) taken += 1;
      if (fast !== null) expect(schema.safeParse(value)).toEqual({ success: true, data: fast });
      if (typeof value === 'object' && value !== null && (value as { type?: unknown }).type === type)
        expect(parseCliFrame(value)).toEqual(parsedBySchemaAlone(value, type, schema));
    }),
    { numRuns: 3000 },
  );
  return taken;
}
