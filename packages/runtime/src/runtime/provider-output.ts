import type { EventBody, InteractionAnswer, QuestionSetRequest } from '@tether/protocol';
import type { AgentProviderV1Part } from '@tether/provider-spec';
import { acceptsProviderPart } from '../state/session-machine.js';
import { type SessionLog, now, withRunEndCancellations } from './session-log.js';
import type { SessionEntry } from './session-entry.js';

export interface InteractionPolicy {
  /** Deny (never allow) a prompt nobody answered within this many milliseconds. Default: no timeout. */
  readonly interactionTimeoutMs?: number;
  /** Marks a question set sensitive: its answers are redacted in the log and in events. */
  readonly isSensitive?: (request: QuestionSetRequest) => boolean;
}

const timeoutMessage = 'Nobody answered this request in time, so it was not permitted. Continue without it.';

export const timeoutDenial: InteractionAnswer = { decision: 'deny', message: timeoutMessage };
export const timeoutDecline: InteractionAnswer = { decision: 'decline', message: timeoutMessage };

/**
 * Turns a provider's parts into session events: only parts of the session's active run enter
 * the log, interactions get the host's policy, diagnostics are recorded once per session per
 * code (a provider must not be able to grow the log without bound), and a run's end cancels
 * what it still holds.
 */
export function acceptProviderPart(
  log: SessionLog,
  entry: SessionEntry,
  part: AgentProviderV1Part,
  policy: InteractionPolicy,
  onTimeout: (entry: SessionEntry, interactionRef: string) => void,
): void {
  if (!acceptsProviderPart(entry.record, part)) {
    noteOnce(log, entry, 'runtime.part_for_inactive_run');
    return;
  }
  let bodies: EventBody[] = [part];
  switch (part.type) {
    case 'diagnostic':
      if (entry.notedDiagnostics.has(part.code)) return;
      entry.notedDiagnostics.add(part.code);
      break;
    case 'session.provider_session_changed':
      if (part.providerSessionId === entry.record.providerSessionId) return;
      break;
    case 'session.mode_changed':
      if (part.mode === entry.record.permissionMode) return;
      break;
    case 'session.model_changed':
      if (part.model === entry.record.model) return;
      break;
    case 'interaction.requested': {
      if (entry.interactions.has(part.interactionRef)) return;
      const request = part.request.kind === 'question_set' && policy.isSensitive?.(part.request) ? { ...part.request, sensitive: true } : part.request;
      bodies = [{ ...part, request }];
      break;
    }
    case 'interaction.withdrawn': {
      const interaction = entry.interactions.get(part.interactionRef);
      if (!interaction || (interaction.status !== 'pending' && interaction.status !== 'resolving')) return;
      break;
    }
    case 'run.completed':
      bodies = withRunEndCancellations(entry, bodies, 'run_ended');
      break;
    default:
      break;
  }
  log.stage(entry, bodies);
  if (part.type === 'interaction.requested' && policy.interactionTimeoutMs !== undefined) {
    const timer = setTimeout(() => onTimeout(entry, part.interactionRef), policy.interactionTimeoutMs);
    timer.unref();
    entry.setTimer(part.interactionRef, timer);
  }
}

export function noteOnce(log: SessionLog, entry: SessionEntry, code: string): void {
  if (entry.notedDiagnostics.has(code)) return;
  entry.notedDiagnostics.add(code);
  log.stage(entry, [{ type: 'diagnostic', level: 'debug', code }], now());
}
