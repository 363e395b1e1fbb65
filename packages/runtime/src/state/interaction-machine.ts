import {
  AgentError,
  type CancelReason,
  type EventBody,
  type InteractionAnswer,
  type InteractionOutcome,
  type RespondInteractionCommand,
  checkAnswer,
  isOpenInteraction,
} from '@tether/protocol';
import type { InteractionRecord, SessionRecord } from '../store/tether-store.js';
import type { Decided, Refusal } from './refusal.js';
import { sessionNotFound } from './session-machine.js';

// The interaction lifecycle as pure functions:
// pending → resolving → approved | denied | answered | declined | send_failed,
// and pending/resolving → withdrawn | cancelled. First answer wins.

function unknownInteraction(): Refusal {
  // The reference is deliberately not echoed: a caller probing references learns nothing.
  return {
    refusal: new AgentError({
      code: 'unknown_interaction',
      message:
        'This session has no interaction with that reference. Use the interactionRef from an interaction.requested event of the same session.',
    }),
  };
}

/** respond_interaction: the interaction, now resolving, whose answer goes to the agent. */
export interface RespondDecision {
  readonly resolving: InteractionRecord;
}

/**
 * pending → resolving: an answer has taken the interaction (any other answer now finds it taken)
 * and is on its way to the agent. Not an event: only where the delivery ends (settled,
 * send_failed) is recorded. Null when the interaction is not pending (nothing to take).
 */
export function startResolving(interaction: InteractionRecord | undefined): InteractionRecord | null {
  return interaction?.status === 'pending' ? { ...interaction, status: 'resolving' } : null;
}

/**
 * Whether a host may answer now. Refuses with unknown_interaction (unknown here, another session's,
 * or the session is closed), interaction_already_settled (no longer pending), or the answer's own
 * refusal (it stays pending so a correct answer can still come).
 */
export function decideRespond(
  session: SessionRecord | undefined,
  interaction: InteractionRecord | undefined,
  command: RespondInteractionCommand,
): Decided<RespondDecision> {
  // No such session is said as for every other command; a closed one has no interaction left to answer.
  if (!session) return sessionNotFound();
  if (session.state === 'closed' || !interaction || interaction.sessionId !== session.sessionId)
    return unknownInteraction();
  const resolving = startResolving(interaction);
  if (resolving === null) {
    return {
      refusal: new AgentError({
        code: 'interaction_already_settled',
        message: `This interaction is already ${interaction.status === 'resolving' ? 'being answered' : interaction.status}; only the first answer counts.`,
        details: { reason: interaction.status },
      }),
    };
  }
  const refusal = checkAnswer(interaction.request, command.answer);
  if (refusal) return { refusal };
  return { resolving };
}

export function outcomeOf(answer: InteractionAnswer): InteractionOutcome {
  switch (answer.decision) {
    case 'approve':
      return 'approved';
    case 'deny':
      return 'denied';
    case 'answer':
      return 'answered';
    case 'decline':
      return 'declined';
  }
}

/** The answer as it may be stored and broadcast: sensitive question answers are left out. */
export function recordableAnswer(interaction: InteractionRecord, answer: InteractionAnswer): InteractionAnswer | null {
  if (interaction.request.kind === 'question_set' && interaction.request.sensitive && answer.decision === 'answer')
    return null;
  return answer;
}

/** Events that close every open interaction, for a run that is ending (or a session closing). */
export function cancellations(open: readonly InteractionRecord[], reason: CancelReason): EventBody[] {
  return open
    .filter((interaction) => isOpenInteraction(interaction.status))
    .map((interaction) => ({
      type: 'interaction.cancelled',
      runId: interaction.runId,
      interactionRef: interaction.interactionRef,
      reason,
    }));
}

/** An interaction after an event about it. */
export function evolveInteraction(
  interaction: InteractionRecord | undefined,
  sessionId: string,
  event: EventBody,
  at: string,
): InteractionRecord | undefined {
  switch (event.type) {
    case 'interaction.requested':
      return {
        interactionRef: event.interactionRef,
        sessionId,
        runId: event.runId,
        status: 'pending',
        request: event.request,
        requestedAt: at,
        settledAt: null,
      };
    case 'interaction.settled':
      return interaction && isOpenInteraction(interaction.status)
        ? { ...interaction, status: event.outcome, settledAt: at }
        : interaction;
    case 'interaction.send_failed':
      return interaction && isOpenInteraction(interaction.status)
        ? { ...interaction, status: 'send_failed', settledAt: at }
        : interaction;
    case 'interaction.withdrawn':
      return interaction && isOpenInteraction(interaction.status)
        ? { ...interaction, status: 'withdrawn', settledAt: at }
        : interaction;
    case 'interaction.cancelled':
      return interaction && isOpenInteraction(interaction.status)
        ? { ...interaction, status: 'cancelled', settledAt: at }
        : interaction;
    default:
      return interaction;
  }
}

/** A session with a run waits for the host while any interaction of it is open. */
export function sessionStateWith(session: SessionRecord, openInteractions: number): SessionRecord['state'] {
  if (session.state === 'closed' || session.activeRunId === null) return session.state;
  return openInteractions > 0 ? 'waiting' : 'running';
}
