import { StopReason } from '@tether/protocol';
import type { ResultFrame } from '../frames/cli-frame-schemas.js';
import type { ActiveTurn } from './translator-state.js';

/** A Messages API stop reason as the protocol names it: a value it does not know reads `other`. */
function toStopReason(raw: string): StopReason {
  const parsed = StopReason.safeParse(raw);
  return parsed.success ? parsed.data : 'other';
}

/**
 * Why the model stopped in this turn, for run.completed. The model's own last stop (the stream's
 * message_delta, or a message that did not stream) comes first: after a max_tokens stop the CLI asks
 * the model to continue, then gives up with a synthetic API-error message whose stop_reason (and so
 * the result's) reads stop_sequence. The result's stop_reason only speaks when no model stop was
 * seen and the turn had no such synthetic message. None for an interrupted run (the interrupt cut
 * the model off, and whether its last stop was seen first is timing) nor for a control (the CLI's
 * own command, not an answer of the model).
 */
export function stopReasonOf(
  turn: ActiveTurn,
  result: ResultFrame,
  outcome: 'succeeded' | 'failed' | 'interrupted',
): StopReason | undefined {
  if (outcome === 'interrupted' || turn.control !== undefined) return undefined;
  const raw = turn.stopReason ?? (turn.apiError === undefined ? result.stop_reason : undefined);
  return raw ? toStopReason(raw) : undefined;
}
