import { z } from 'zod';
import { Command } from './commands.js';
import { AgentError } from './errors/agent-error.js';
import {
  FileInputPart,
  ImageDataInputPart,
  ImagePathInputPart,
  TextInputPart,
  inputPartPosition,
  inputPartTypes,
} from './input.js';
import { parseFrequentCommand } from './parse-command-fast-path.js';

/** The stable reason a refinement attached to its issue (e.g. a configuration limit), if any. */
function reasonOf(issues: readonly z.core.$ZodIssue[]): string | undefined {
  for (const issue of issues) {
    const reason = issue.code === 'custom' ? (issue.params as { reason?: unknown } | undefined)?.reason : undefined;
    if (typeof reason === 'string') return reason;
  }
  return undefined;
}

/** Where a value broke its schema and how, never the value itself: for a refusal's details.issues. */
export function describeIssues(issues: readonly z.core.$ZodIssue[], whole = '(command)') {
  return issues.slice(0, 50).map((issue) => ({
    path: issue.path.map(String).join('.').slice(0, 500) || whole,
    message: issue.message.slice(0, 500),
  }));
}

const commandSchemas = new Map<string, z.ZodType<Command>>();

/**
 * The schema of the command's own type, else the whole union (whose refusal names the type). The
 * union's first parse prepares every command type's schema, a few ms of a session's first turn.
 */
function schemaOf(value: unknown): z.ZodType<Command> {
  const type = typeof value === 'object' && value !== null ? (value as { type?: unknown }).type : undefined;
  if (typeof type !== 'string') return Command;
  let schema = commandSchemas.get(type);
  if (!schema) {
    const option = Command.options.find((candidate) => candidate.shape.type.value === type);
    if (!option) return Command;
    schema = option as z.ZodType<Command>;
    commandSchemas.set(type, schema);
  }
  return schema;
}

/**
 * Validates an untrusted command. Bad shapes → invalid_command listing where (never the values),
 * with details.reason when a named limit was broken (see ConfigurationRefusal);
 * input parts of a kind Tether cannot pass on → capability_unsupported.
 */
export function parseCommand(value: unknown): Command {
  const frequent = parseFrequentCommand(value);
  if (frequent !== undefined) return frequent;
  // jitless: zod would compile a fast path on a schema's first parse, which costs more than it saves
  // on anything not parsed thousands of times (a host's commands are not), and delays a first turn.
  const parsed = schemaOf(value).safeParse(value, { jitless: true });
  if (!parsed.success) {
    const issues = describeIssues(parsed.error.issues);
    const reason = reasonOf(parsed.error.issues);
    const summary = issues
      .map((issue) => `${issue.path}: ${issue.message}`)
      .slice(0, 3)
      .join('; ');
    throw new AgentError({
      code: 'invalid_command',
      message: `The command is not valid (${summary}). Fix those fields and send it again with a new commandId.`,
      details: { issues, ...(reason === undefined ? {} : { reason }) },
    });
  }
  const command = parsed.data;
  if (command.type === 'submit_turn') command.input.forEach(checkInputPart);
  return command;
}

const partShapes: Record<string, { readonly schema: z.ZodType; readonly expected: string }> = {
  text: { schema: TextInputPart, expected: '{"type":"text","text":"..."} with 1 to 1,000,000 characters' },
  image: {
    schema: z.union([ImageDataInputPart, ImagePathInputPart]),
    expected:
      '{"type":"image","mediaType":"image/png","data":"<base64>"} (image/png, image/jpeg, image/gif or image/webp) or {"type":"image","path":"<file>"}',
  },
  file: { schema: FileInputPart, expected: '{"type":"file","path":"<file in the workspace>"}' },
};

/** A submit_turn input part: a known type in its exact shape. */
function checkInputPart(part: { readonly type: string }, index: number, input: readonly unknown[]): void {
  // Own keys only: "valueOf" or "constructor" would find Object.prototype's members.
  const shape = Object.hasOwn(partShapes, part.type) ? partShapes[part.type] : undefined;
  const position = inputPartPosition(index, input.length);
  if (!shape) {
    throw new AgentError({
      code: 'capability_unsupported',
      message: `Input part ${position} has type "${part.type.slice(0, 40)}", which Tether does not know. Send ${inputPartTypes.map((type) => `"${type}"`).join(', ')} parts.`,
      details: { reason: 'input_part_type', index },
    });
  }
  const checked = shape.schema.safeParse(part, { jitless: true });
  if (!checked.success) {
    throw new AgentError({
      code: 'invalid_command',
      message: `Input part ${position} is not a valid ${part.type} part: it needs ${shape.expected}, and no other fields.`,
      details: {
        reason: 'input_part_shape',
        index,
        issues: describeIssues(checked.error.issues).map((issue) => ({
          ...issue,
          path: `input.${index}.${issue.path}`,
        })),
      },
    });
  }
}
