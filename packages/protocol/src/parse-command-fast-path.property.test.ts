import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InterruptRunCommand, SubmitTurnCommand } from './commands.js';
import { TextInputPart } from './input.js';
import { parseFrequentCommand } from './parse-command-fast-path.js';

// The fast path must never accept what the schemas refuse, nor give a command other than theirs.

/** What the schemas make of a value: the command, or undefined for a refusal (text parts only, as the fast path takes). */
function bySchemas(value: unknown): unknown {
  const type = (value as { type?: unknown } | null)?.type;
  const schema = type === 'submit_turn' ? SubmitTurnCommand : type === 'interrupt_run' ? InterruptRunCommand : null;
  const parsed = schema?.safeParse(value, { jitless: true });
  if (!parsed?.success) return undefined;
  const command = parsed.data as { input?: unknown[] };
  if (command.input?.some((part) => !TextInputPart.safeParse(part).success)) return undefined;
  return command;
}

const validSessionId = `ses_${'a'.repeat(32)}`;
const validRunId = `run_${'b'.repeat(32)}`;
const maybe = <Value>(value: fc.Arbitrary<Value>) => fc.option(value, { nil: undefined, freq: 3 });

/** Mostly valid values, each field sometimes one of the near misses: one wrong field at a time is what tests a check. */
const mostly = <Value>(valid: fc.Arbitrary<Value>, ...wrong: fc.Arbitrary<unknown>[]) =>
  fc.oneof({ weight: 12, arbitrary: valid as fc.Arbitrary<unknown> }, ...wrong);

const commandId = mostly(
  fc.constantFrom('c1', 'cmd_0123', 'a.b:c-d_e', 'x'.repeat(200)),
  fc.constantFrom('x'.repeat(201), '', '-leading', 'sp ace'),
  fc.string({ maxLength: 12 }),
  fc.jsonValue(),
);
const sessionId = mostly(
  fc.constant(validSessionId),
  fc.constantFrom(`ses_${'A'.repeat(32)}`, `ses_${'a'.repeat(31)}`, validRunId, `${validSessionId}\n`),
  fc.jsonValue(),
);
const runId = mostly(fc.constant(validRunId), fc.constantFrom(validSessionId, `run_${'b'.repeat(33)}`), fc.jsonValue());
const text = mostly(
  fc.string({ minLength: 1, maxLength: 8 }),
  fc.constantFrom('', 'x'.repeat(1_000_000), 'x'.repeat(1_000_001)),
  fc.jsonValue(),
);
const part = mostly(
  text.map((value) => ({ type: 'text', text: value })),
  text.map((value) => ({ text: value, type: 'text' })),
  text.map((value) => ({ type: 'text', text: value, extra: 1 })),
  fc.constant({ type: 'text' }),
  fc.constant({ type: 'image', path: '/a.png' }),
  text.map((value) => Object.assign(Object.create(null), { type: 'text', text: value })),
  fc.jsonValue(),
);
const input = mostly(
  fc.array(part, { minLength: 1, maxLength: 3 }),
  fc.constant([]),
  fc.constant(Array.from({ length: 200 }, () => ({ type: 'text', text: 'x' }))),
  fc.constant(Array.from({ length: 201 }, () => ({ type: 'text', text: 'x' }))),
  fc.jsonValue(),
);
const flag = mostly(fc.boolean(), fc.jsonValue());
const delivery = mostly(fc.constantFrom('after_turn', 'steer'), fc.constant('later'), fc.jsonValue());
const extra = mostly(
  fc.constant(undefined),
  fc.tuple(fc.constantFrom('extra', '__proto__', 'sessionId', 'text'), fc.jsonValue()),
) as fc.Arbitrary<[string, unknown] | undefined>;
const keepUndefined = mostly(fc.constant(false), fc.constant(true)) as fc.Arbitrary<boolean>;

/** Drops the fields left undefined by `maybe`, unless kept to test an explicit undefined. */
function shape(fields: Record<string, unknown>, keepUndefined: boolean, added: [string, unknown] | undefined) {
  const value: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(fields)) if (field !== undefined || keepUndefined) value[key] = field;
  if (added)
    Object.defineProperty(value, added[0], { value: added[1], enumerable: true, writable: true, configurable: true });
  return value;
}

const submitTurns = fc
  .record({
    commandId,
    sessionId,
    input,
    redactInput: maybe(flag),
    delivery: maybe(delivery),
    keepUndefined,
    extra,
  })
  .map(({ keepUndefined, extra: added, ...fields }) => shape({ type: 'submit_turn', ...fields }, keepUndefined, added));
const interruptRuns = fc
  .record({ commandId, sessionId, runId: maybe(runId), cancelQueued: maybe(flag), keepUndefined, extra })
  .map(({ keepUndefined, extra: added, ...fields }) =>
    shape({ type: 'interrupt_run', ...fields }, keepUndefined, added),
  );

describe('parseFrequentCommand (property-based)', () => {
  it('gives what the schemas give, key for key in their order, or leaves the value to them', () => {
    fc.assert(
      fc.property(fc.oneof(submitTurns, interruptRuns), (value) => {
        const fast = parseFrequentCommand(value);
        const expected = bySchemas(value);
        if (fast === undefined) return;
        expect(expected).toBeDefined();
        expect(fast).toEqual(expected);
        expect(JSON.stringify(fast)).toBe(JSON.stringify(expected));
      }),
      { numRuns: 3000 },
    );
  });

  it('takes the commands a host sends every turn, leaving nothing to the schemas', () => {
    const commands = [
      { type: 'submit_turn', commandId: 'c1', sessionId: validSessionId, input: [{ type: 'text', text: 'hi' }] },
      {
        type: 'submit_turn',
        commandId: 'c2',
        sessionId: validSessionId,
        input: [
          { type: 'text', text: 'a' },
          { type: 'text', text: 'b' },
        ],
        redactInput: true,
        delivery: 'steer',
      },
      { type: 'interrupt_run', commandId: 'c3', sessionId: validSessionId },
      { type: 'interrupt_run', commandId: 'c4', sessionId: validSessionId, runId: validRunId, cancelQueued: false },
    ];
    for (const command of commands) expect(parseFrequentCommand(command)).toEqual(bySchemas(command));
    for (const command of commands) expect(parseFrequentCommand(command)).toEqual(command);
  });
});
