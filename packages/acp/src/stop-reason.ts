import type { StopReason } from '@agentclientprotocol/sdk';
import type { EventOfType, SerializedAgentError } from '@tether/protocol';

/** How a prompt ends: a stop reason, or the error the prompt answers with. */
export type PromptEnding = { readonly stopReason: StopReason } | { readonly error: SerializedAgentError };

const runFailedWithoutError: SerializedAgentError = {
  code: 'internal_error',
  message: 'The run failed without saying why. Retry the prompt; if it persists, report it.',
  retryable: false,
};

/**
 * The prompt's answer from its run's end. A prompt the client cancelled ends cancelled whatever
 * the run did after; any other failed run is an error, never a quiet end_turn. A prompt queued
 * behind another run that never started ends cancelled (withdrawn, interrupted, the session
 * closed, Tether restarted), or with the agent's refusal.
 */
export function promptEnding(
  completed: EventOfType<'run.completed'> | EventOfType<'input.cancelled'>,
  cancelRequested: boolean,
): PromptEnding {
  if (completed.type === 'input.cancelled')
    // A refusal (agent_refused, input_invalid) carries why; a withdrawal or a stop does not.
    return completed.error ? { error: completed.error } : { stopReason: 'cancelled' };
  if (cancelRequested || completed.outcome === 'interrupted') return { stopReason: 'cancelled' };
  // Claude Code ends an answer cut at the output limit, or refused, as a failed run; ACP has a stop reason for each.
  if (completed.stopReason === 'max_tokens') return { stopReason: 'max_tokens' };
  if (completed.stopReason === 'refusal') return { stopReason: 'refusal' };
  // The session's maxTurns stopped the run (Claude Code fails it): ACP has a stop reason for that limit.
  if (completed.error?.code === 'budget_exceeded' && completed.error.details?.reason === 'max_turns')
    return { stopReason: 'max_turn_requests' };
  if (completed.outcome === 'failed') return { error: completed.error ?? runFailedWithoutError };
  return { stopReason: 'end_turn' };
}
