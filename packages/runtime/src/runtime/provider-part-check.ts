import { eventBodySchema } from '@tether/protocol';
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
};

/**
 * Checks a part against the protocol before it is stored (a row clients cannot parse must never
 * enter the log). Null when the part is well formed; otherwise the type to report: one of the part
 * types, or "unknown" (an unknown type is provider text, so it is never repeated).
 */
export function refusedPartType(part: unknown): AgentProviderV1PartType | 'unknown' | null {
  if (typeof part !== 'object' || part === null) return 'unknown';
  const type: unknown = (part as { type?: unknown }).type;
  if (typeof type !== 'string' || !Object.hasOwn(providerPartTypes, type)) return 'unknown';
  return eventBodySchema(type)!.safeParse(part).success ? null : (type as AgentProviderV1PartType);
}
