import type {
  DiagnosticLevel,
  EventBody,
  InteractionAnswer,
  QuestionSetRequest,
  SerializedAgentError,
} from '@tether/protocol';
import type { AgentProviderV1Part } from '@tether/provider-spec';
import { acceptsProviderPart, queuedAfterTurn } from '../state/session-machine.js';
import { closedPlanWindow, withPlanLimitNamed } from './plan-limit-hold.js';
import { refusedPartType } from './provider-part-check.js';
import {
  type SessionLog,
  now,
  runNotStartedByShutdown,
  runStoppedByShutdown,
  withRunEndCancellations,
} from './session-log.js';
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

/** What accepting provider output calls back into the runtime for. */
export interface ProviderOutputHandlers {
  /** An interaction's policy timeout ran out. */
  readonly onTimeout: (entry: SessionEntry, interactionRef: string) => void;
  /** The provider broke its contract during this run: end the run failed with this error and stop the agent's work on it. */
  readonly onContractViolation: (entry: SessionEntry, runId: string, error: SerializedAgentError) => void;
  /** The run waits for an agent process slot (run.queued): nothing has reached the agent yet. */
  readonly onQueuedForProcess: (entry: SessionEntry, runId: string) => void;
}

/**
 * Turns a provider's parts into session events: only well-formed parts of the session's active
 * run enter the log, interactions get the host's policy, diagnostics are recorded once per session
 * per code (a provider must not be able to grow the log without bound), and a run's end cancels
 * what it still holds.
 */
export function acceptProviderPart(
  log: SessionLog,
  entry: SessionEntry,
  part: AgentProviderV1Part,
  policy: InteractionPolicy,
  handlers: ProviderOutputHandlers,
): void {
  const refused = refusedPartType(part);
  if (refused !== null) {
    refuseMalformedPart(log, entry, part, refused, handlers);
    return;
  }
  if (!acceptsProviderPart(entry.record, part)) {
    noteOnce(log, entry, 'runtime.part_for_inactive_run');
    return;
  }
  if (part.type === 'run.message_delta' || part.type === 'run.thinking_delta') {
    log.stageDelta(entry, part);
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
      if (part.mode === entry.record.permissionMode || entry.modesBeingSet.includes(part.mode)) return;
      break;
    case 'session.model_changed':
      // A host's choice (the model control) is kept for the next launch even when the agent runs that model already.
      if (
        part.model === entry.record.model &&
        (part.source !== 'command' || entry.record.configuration.model === part.model)
      )
        return;
      break;
    case 'interaction.requested': {
      if (entry.interactions.has(part.interactionRef)) return;
      const request =
        part.request.kind === 'question_set' && policy.isSensitive?.(part.request)
          ? { ...part.request, sensitive: true }
          : part.request;
      bodies = [{ ...part, request }];
      break;
    }
    case 'interaction.withdrawn': {
      const interaction = entry.interactions.get(part.interactionRef);
      if (!interaction || (interaction.status !== 'pending' && interaction.status !== 'resolving')) return;
      break;
    }
    case 'run.queued':
      entry.runWaitingForProcess = part.runId;
      break;
    case 'session.process_started':
      entry.runWaitingForProcess = null;
      break;
    case 'run.completed': {
      const closed = part.error && closedPlanWindow(entry.record.limits, Date.now());
      const stoppedByShutdown = part.outcome === 'interrupted' && entry.stoppedByShutdown.has(part.runId);
      // One that still waited for a process slot never reached the agent: said so.
      const shutdownError = entry.runWaitingForProcess === part.runId ? runNotStartedByShutdown : runStoppedByShutdown;
      entry.runWaitingForProcess = null;
      const error =
        part.error === undefined && stoppedByShutdown
          ? shutdownError
          : part.error && withPlanLimitNamed(part.error, closed, queuedAfterTurn(entry.record).length);
      bodies = withRunEndCancellations(entry, [error ? { ...part, error } : part], 'run_ended');
      break;
    }
    default:
      break;
  }
  log.stage(entry, bodies);
  if (part.type === 'run.queued') handlers.onQueuedForProcess(entry, part.runId);
  if (part.type === 'interaction.requested' && policy.interactionTimeoutMs !== undefined) {
    const timer = setTimeout(() => handlers.onTimeout(entry, part.interactionRef), policy.interactionTimeoutMs);
    timer.unref();
    entry.setTimer(part.interactionRef, timer);
  }
}

/**
 * A part that does not match the protocol is never stored: the diagnostic names its type (never its
 * content) and the active run fails with provider_contract_violation, once (after that, the run is
 * no longer active and its later parts are dropped). A part that names another run, or arrives
 * while no run is active, is dropped and fails nothing.
 */
function refuseMalformedPart(
  log: SessionLog,
  entry: SessionEntry,
  part: unknown,
  type: string,
  handlers: ProviderOutputHandlers,
): void {
  const runId = entry.record.activeRunId;
  const partRunId: unknown = (part as { runId?: unknown } | null)?.runId;
  if (typeof partRunId === 'string' && partRunId !== runId) {
    noteOnce(log, entry, 'runtime.part_for_inactive_run');
    return;
  }
  noteOnce(log, entry, `runtime.malformed_part.${type}`, 'error');
  if (runId === null || entry.record.state === 'closed') return;
  handlers.onContractViolation(entry, runId, {
    code: 'provider_contract_violation',
    message: `The ${entry.record.provider} provider sent a ${type === 'unknown' ? 'part of an unknown type' : `${type} part`} that does not match the protocol, so the run was ended. Retry the turn; if it repeats, report it with the provider's version (tether doctor).`,
    retryable: true,
    details: { reason: 'malformed_part' },
  });
}

export function noteOnce(log: SessionLog, entry: SessionEntry, code: string, level: DiagnosticLevel = 'debug'): void {
  if (entry.notedDiagnostics.has(code)) return;
  entry.notedDiagnostics.add(code);
  log.stage(entry, [{ type: 'diagnostic', level, code }], now());
}
