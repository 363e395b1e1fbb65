import { type InterruptRunCommand, type SubmitTurnCommand, inputPartsLimit } from './commands.js';
import { commandIdLengthLimit, identifierPatterns } from './identifiers.js';
import { textInputLengthLimit } from './input.js';
import { InputDelivery } from './queued-inputs.js';

/**
 * The two commands on the way to every turn's first token and every stop, checked by hand: a
 * submit_turn of text parts and an interrupt_run, in exactly the shape their schemas accept, give
 * the command the schemas would give, field for field and in the same order
 * (parse-command.property.test.ts holds the two together). Anything else, valid or not, gives
 * undefined: the schemas decide, and word the refusal.
 *
 * Why by hand: the schemas are parsed without compiling (see parseCommand), and took ~0.05 ms of a
 * turn's ~0.4 ms before the CLI is written to, measured in a host between two turns; this takes a
 * tenth of that (docs/benchmarks.md, "Fewer pages a commit").
 */
export function parseFrequentCommand(value: unknown): SubmitTurnCommand | InterruptRunCommand | undefined {
  if (!isObject(value)) return undefined;
  if (value['type'] === 'submit_turn') return submitTurn(value);
  if (value['type'] === 'interrupt_run') return interruptRun(value);
  return undefined;
}

type Fields = Record<string, unknown>;

const submitTurnKeys = new Set(['type', 'commandId', 'sessionId', 'input', 'redactInput', 'delivery']);
const interruptRunKeys = new Set(['type', 'commandId', 'sessionId', 'runId', 'cancelQueued']);
const deliveries = new Set<unknown>(InputDelivery.options);

function submitTurn(fields: Fields): SubmitTurnCommand | undefined {
  if (!hasOnly(fields, submitTurnKeys) || !isCommandId(fields['commandId'])) return undefined;
  if (!isId(fields['sessionId'], identifierPatterns.session)) return undefined;
  const input = textParts(fields['input']);
  if (input === undefined) return undefined;
  const command: SubmitTurnCommand = {
    type: 'submit_turn',
    commandId: fields['commandId'],
    sessionId: fields['sessionId'],
    input,
  };
  if ('redactInput' in fields) {
    if (typeof fields['redactInput'] !== 'boolean') return undefined;
    command.redactInput = fields['redactInput'];
  }
  if ('delivery' in fields) {
    if (!deliveries.has(fields['delivery'])) return undefined;
    command.delivery = fields['delivery'] as InputDelivery;
  }
  return command;
}

function interruptRun(fields: Fields): InterruptRunCommand | undefined {
  if (!hasOnly(fields, interruptRunKeys) || !isCommandId(fields['commandId'])) return undefined;
  if (!isId(fields['sessionId'], identifierPatterns.session)) return undefined;
  const command: InterruptRunCommand = {
    type: 'interrupt_run',
    commandId: fields['commandId'],
    sessionId: fields['sessionId'],
  };
  if ('runId' in fields) {
    if (!isId(fields['runId'], identifierPatterns.run)) return undefined;
    command.runId = fields['runId'];
  }
  if ('cancelQueued' in fields) {
    if (typeof fields['cancelQueued'] !== 'boolean') return undefined;
    command.cancelQueued = fields['cancelQueued'];
  }
  return command;
}

/** Text parts only, each exactly { type: 'text', text }, copied. */
function textParts(value: unknown): SubmitTurnCommand['input'] | undefined {
  if (!Array.isArray(value) || value.length < 1 || value.length > inputPartsLimit) return undefined;
  const parts: SubmitTurnCommand['input'] = [];
  for (const part of value) {
    if (!isObject(part) || Object.keys(part).length !== 2 || part['type'] !== 'text') return undefined;
    const text = part['text'];
    if (typeof text !== 'string' || text.length < 1 || text.length > textInputLengthLimit) return undefined;
    parts.push({ type: 'text', text });
  }
  return parts;
}

function isObject(value: unknown): value is Fields {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** No field but the command's own (a field set to undefined fails its own check below). */
function hasOnly(fields: Fields, allowed: ReadonlySet<string>): boolean {
  for (const key of Object.keys(fields)) if (!allowed.has(key)) return false;
  return true;
}

function isCommandId(value: unknown): value is string {
  return (
    typeof value === 'string' &&
    value.length >= 1 &&
    value.length <= commandIdLengthLimit &&
    identifierPatterns.command.test(value)
  );
}

function isId(value: unknown, pattern: RegExp): value is string {
  return typeof value === 'string' && pattern.test(value);
}
