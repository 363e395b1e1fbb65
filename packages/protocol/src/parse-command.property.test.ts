import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AgentError, SerializedAgentError } from './errors/agent-error.js';
import { parseCommand } from './parse-command.js';

// parseCommand stands at the trust boundary: whatever JSON a caller sends, it returns a command or
// throws a typed refusal that serialises, never echoes values, and leaves the input as it was.

const sessionId = `ses_${'a'.repeat(32)}`;
const secret = 'sk-ant-SECRET-do-not-echo';

/** One valid command of each kind: the seeds that near-valid inputs are grown from. */
const validCommands: Record<string, unknown>[] = [
  {
    type: 'open_session',
    commandId: 'c1',
    workspace: { kind: 'directory', path: '/repo' },
    model: 'sonnet',
    permissionMode: 'plan',
  },
  { type: 'open_session', commandId: 'c2', continueSession: sessionId },
  { type: 'submit_turn', commandId: 'c3', sessionId, input: [{ type: 'text', text: 'hi' }] },
  { type: 'interrupt_run', commandId: 'c4', sessionId },
  { type: 'close_session', commandId: 'c5', sessionId },
  {
    type: 'respond_interaction',
    commandId: 'c6',
    sessionId,
    interactionRef: `int_${'b'.repeat(32)}`,
    answer: { decision: 'approve', scope: 'once' },
  },
  { type: 'set_permission_mode', commandId: 'c7', sessionId, mode: 'plan' },
  { type: 'run_control', commandId: 'c8', sessionId, name: 'compact', argument: 'keep the tests' },
  { type: 'set_model', commandId: 'c9', sessionId, model: 'sonnet' },
  { type: 'get_context_usage', commandId: 'c10', sessionId },
  { type: 'get_session_cost', commandId: 'c11', sessionId },
];

const seed = fc.constantFrom(...validCommands);

/** A valid command with one field replaced, removed or added: reaches the deeper checks that random JSON never does. */
const nearValid = fc.oneof(
  fc.tuple(seed, fc.nat(), fc.jsonValue()).map(([command, index, value]) => {
    const keys = Object.keys(command);
    return { ...command, [keys[index % keys.length]!]: value };
  }),
  fc.tuple(seed, fc.nat()).map(([command, index]) => {
    const keys = Object.keys(command);
    const { [keys[index % keys.length]!]: _removed, ...rest } = command;
    return rest;
  }),
  fc
    .tuple(seed, fc.string({ minLength: 1, maxLength: 20 }), fc.jsonValue())
    .map(([command, key, value]) => ({ ...command, [key]: value })),
  fc
    .array(
      fc.oneof(
        fc.record({ type: fc.constant('text'), text: fc.string({ maxLength: 30 }) }),
        fc.record({ type: fc.string({ maxLength: 30 }) }),
        fc.jsonValue(),
      ),
      { maxLength: 4 },
    )
    .map((input) => ({
      type: 'submit_turn',
      commandId: 'c',
      sessionId,
      input,
    })),
);

const untrusted = fc.oneof(
  fc.anything({
    withNullPrototype: true,
    withBigInt: true,
    withDate: true,
    withMap: true,
    withSet: true,
    withSparseArray: true,
  }),
  fc.jsonValue(),
  nearValid,
);

function outcomeOf(value: unknown): { command: unknown } | { error: unknown } {
  try {
    return { command: parseCommand(value) };
  } catch (error) {
    return { error };
  }
}

describe('parseCommand (property-based)', () => {
  it('returns a command or throws a typed, serialisable refusal, and leaves its input unchanged', () => {
    fc.assert(
      fc.property(untrusted, (value) => {
        const before = structuredClone(value);
        const outcome = outcomeOf(value);
        expect(value).toEqual(before);
        if ('error' in outcome) {
          expect(AgentError.isInstance(outcome.error)).toBe(true);
          const error = outcome.error as AgentError;
          expect(['invalid_command', 'capability_unsupported']).toContain(error.code);
          expect(SerializedAgentError.safeParse(error.toObject()).success).toBe(true);
        } else {
          // What was accepted is a fixed point: parsing it again gives the same command.
          expect(parseCommand(outcome.command)).toEqual(outcome.command);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('never echoes a refused value back in the error', () => {
    const hidden = fc.constantFrom(secret, { nested: secret }, [secret], { [secret.slice(0, 3)]: secret });
    fc.assert(
      fc.property(seed, fc.nat(), hidden, (command, index, value) => {
        const keys = Object.keys(command).filter((key) => key !== 'type');
        const outcome = outcomeOf({ ...command, [keys[index % keys.length]!]: value });
        if ('error' in outcome)
          expect(JSON.stringify((outcome.error as AgentError).toObject())).not.toContain('SECRET');
        else expect(JSON.stringify(outcome.command)).toContain(secret);
      }),
      { numRuns: 200 },
    );
  });
});
