import { deltaTextLimit, eventBodySchema, eventIdLengthLimit } from '@tether/protocol';
import type { AgentProviderV1PartType } from '@tether/provider-spec';

/** The event types a provider may emit (the compiler keeps this in step with AgentProviderV1Part). */
const providerPartTypes: Record<AgentProviderV1PartType, true> = {
  'run.queued': true,
  'run.checkpointed': true,
  'run.message_delta': true,
  'run.thinking_delta': true,
  'run.retrying': true,
  'run.tool_activity': true,
  'run.usage': true,
  'run.completed': true,
  'session.provider_session_changed': true,
  'session.mode_changed': true,
  'session.model_changed': true,
  'session.process_started': true,
  'session.process_stopped': true,
  'control.completed': true,
  'context.cleared': true,
  'interaction.requested': true,
  'interaction.withdrawn': true,
  diagnostic: true,
  'input.folded': true,
  'input.cancelled': true,
  'session.limits_changed': true,
  'session.context_measured': true,
};

const deltaKeys: Record<string, true> = { type: true, runId: true, blockId: true, text: true, parentToolUseId: true };

/** A run id the protocol's schema accepted in an earlier delta: the same text is accepted again. */
let acceptedRunId: string | null = null;

function isBoundedText(value: unknown, minimum: number, maximum: number): boolean {
  return typeof value === 'string' && value.length >= minimum && value.length <= maximum;
}

/**
 * Whether a text or thinking delta is certainly well formed, without its zod schema: a streamed
 * answer is thousands of them, and the schema cost more than storing them. Only a plain object
 * with exactly the delta's fields, each within the schema's bounds, and a run id the schema already
 * accepted passes; anything else is left to the schema, so nothing it refuses gets through.
 */
function isPlainDelta(part: Record<string, unknown>): boolean {
  if (acceptedRunId === null || part['runId'] !== acceptedRunId) return false;
  if (Object.getPrototypeOf(part) !== Object.prototype) return false;
  for (const key in part) if (deltaKeys[key] !== true) return false;
  const parent = part['parentToolUseId'];
  return (
    isBoundedText(part['blockId'], 1, eventIdLengthLimit) &&
    isBoundedText(part['text'], 0, deltaTextLimit) &&
    (parent === undefined || isBoundedText(parent, 1, eventIdLengthLimit))
  );
}

/**
 * Checks a part against the protocol before it is stored (a row clients cannot parse must never
 * enter the log). Null when the part is well formed; otherwise the type to report: one of the part
 * types, or "unknown" (an unknown type is provider text, so it is never repeated).
 */
export function refusedPartType(part: unknown): AgentProviderV1PartType | 'unknown' | null {
  if (typeof part !== 'object' || part === null) return 'unknown';
  const type: unknown = (part as { type?: unknown }).type;
  if (typeof type !== 'string' || !Object.hasOwn(providerPartTypes, type)) return 'unknown';
  const isDelta = type === 'run.message_delta' || type === 'run.thinking_delta';
  if (isDelta && isPlainDelta(part as Record<string, unknown>)) return null;
  // Not compiled (jitless): past the delta shortcut, each type is checked a few times a turn.
  if (!eventBodySchema(type)!.safeParse(part, { jitless: true }).success) return type as AgentProviderV1PartType;
  if (isDelta) acceptedRunId = (part as { runId: string }).runId;
  return null;
}
