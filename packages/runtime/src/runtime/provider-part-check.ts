import { RunOutcome, StopReason, deltaTextLimit, eventBodySchema, eventIdLengthLimit } from '@tether/protocol';
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
  'context.compacted': true,
  'interaction.requested': true,
  'interaction.withdrawn': true,
  diagnostic: true,
  'input.folded': true,
  'input.cancelled': true,
  'session.limits_changed': true,
  'session.context_measured': true,
};

const deltaKeys: Record<string, true> = { type: true, runId: true, blockId: true, text: true, parentToolUseId: true };
const usageKeys: Record<string, true> = {
  type: true,
  runId: true,
  inputTokens: true,
  outputTokens: true,
  cacheReadTokens: true,
  cacheCreationTokens: true,
  costUsd: true,
};
const completedKeys: Record<string, true> = { type: true, runId: true, outcome: true, stopReason: true };
const checkpointKeys: Record<string, true> = {
  type: true,
  runId: true,
  providerSessionId: true,
  inputMessageId: true,
  lastMessageId: true,
};
/** The bound RunCheckpointedEvent puts on the agent's ids (the property test holds the two together). */
const agentIdLengthLimit = 300;
const outcomes = new Set<unknown>(RunOutcome.options);
const stopReasons = new Set<unknown>(StopReason.options);

/** A run id the protocol's schema accepted in an earlier part: the same text is accepted again. */
let acceptedRunId: string | null = null;

function isBoundedText(value: unknown, minimum: number, maximum: number): boolean {
  return typeof value === 'string' && value.length >= minimum && value.length <= maximum;
}

function isCount(value: unknown): boolean {
  return Number.isSafeInteger(value) && (value as number) >= 0;
}

/** A plain object of the run the schema already accepted, with no field but `keys`. */
function isPlainPartOfAcceptedRun(part: Record<string, unknown>, keys: Record<string, true>): boolean {
  if (acceptedRunId === null || part['runId'] !== acceptedRunId) return false;
  if (Object.getPrototypeOf(part) !== Object.prototype) return false;
  for (const key in part) if (keys[key] !== true) return false;
  return true;
}

/**
 * Whether a part is certainly well formed, without its zod schema: a streamed answer is thousands
 * of deltas, and the schema cost more than storing them; a turn's end (its usage, checkpoint and end)
 * waited ~0.15 ms for the schema, on a host whose code had gone cold while the model answered.
 * Only a plain object with exactly its type's fields, each within the schema's bounds, and a run
 * id the schema already accepted passes; anything else (a failed run's error, say) is left to the
 * schema, so nothing it refuses gets through.
 */
function isPlainPart(type: string, part: Record<string, unknown>): boolean {
  if (type === 'run.message_delta' || type === 'run.thinking_delta') {
    if (!isPlainPartOfAcceptedRun(part, deltaKeys)) return false;
    const parent = part['parentToolUseId'];
    return (
      isBoundedText(part['blockId'], 1, eventIdLengthLimit) &&
      isBoundedText(part['text'], 0, deltaTextLimit) &&
      (parent === undefined || isBoundedText(parent, 1, eventIdLengthLimit))
    );
  }
  if (type === 'run.usage') {
    const cost = part['costUsd'];
    return (
      isPlainPartOfAcceptedRun(part, usageKeys) &&
      isCount(part['inputTokens']) &&
      isCount(part['outputTokens']) &&
      isCount(part['cacheReadTokens']) &&
      isCount(part['cacheCreationTokens']) &&
      (cost === null || (typeof cost === 'number' && Number.isFinite(cost) && cost >= 0))
    );
  }
  if (type === 'run.checkpointed') {
    const input = part['inputMessageId'];
    const last = part['lastMessageId'];
    return (
      isPlainPartOfAcceptedRun(part, checkpointKeys) &&
      isBoundedText(part['providerSessionId'], 1, agentIdLengthLimit) &&
      (input === null || isBoundedText(input, 1, agentIdLengthLimit)) &&
      (last === null || isBoundedText(last, 1, agentIdLengthLimit))
    );
  }
  if (type === 'run.completed') {
    const stopReason = part['stopReason'];
    return (
      isPlainPartOfAcceptedRun(part, completedKeys) &&
      outcomes.has(part['outcome']) &&
      (stopReason === undefined || stopReasons.has(stopReason))
    );
  }
  return false;
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
  if (isPlainPart(type, part as Record<string, unknown>)) return null;
  // Not compiled (jitless): past the shortcuts, each type is checked a few times a turn.
  if (!eventBodySchema(type)!.safeParse(part, { jitless: true }).success) return type as AgentProviderV1PartType;
  const runId: unknown = (part as { runId?: unknown }).runId;
  if (typeof runId === 'string') acceptedRunId = runId;
  return null;
}
