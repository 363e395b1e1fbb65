import { AgentError } from '@tether/protocol';
import type { ClaudeConnection } from '../connection/claude-connection.js';
import type { ActiveTurn } from '../translate/translator-state.js';

/** What becomes of a turn whose stop was answered without stopping it yet. */
export interface InterruptOutcomes {
  /** The input never started, so no result will come for it: the receipt is the end of the run. */
  readonly onCancelledBeforeStart: () => void;
  /** The stop came before the CLI took the turn, which it will still run: stop it again once it starts. */
  readonly onTurnNotReached: () => void;
}

/**
 * Sends the interrupt request for a turn and reads its receipt. Where the transport can ask for
 * cancel_queued (both do, with a CLI that knows it), a stop means stop: queued input is dropped, not
 * run afterwards. The receipt's shape (a `cancelled` list or not) tells which rules apply, so an SDK
 * that ignores cancelQueued and an older CLI get the older rules.
 */
export async function requestInterrupt(
  connection: ClaudeConnection,
  turn: ActiveTurn,
  outcomes: InterruptOutcomes,
  options: { firstTurnOfProcess: boolean; timeoutMs: number },
): Promise<{ applied: boolean }> {
  // Whether the stop can have found the turn running: a turn not started when the stop was sent may
  // still be unread input, which no receipt names (the CLI answers as at idle, then runs the turn).
  const startedWhenAsked = turn.started;
  const response = (await connection.request({ subtype: 'interrupt' }, { timeoutMs: options.timeoutMs })) as
    | { still_queued?: unknown; cancelled?: unknown }
    | undefined;
  const stillQueued = Array.isArray(response?.still_queued) ? (response.still_queued as unknown[]) : [];
  const cancelled = Array.isArray(response?.cancelled) ? (response.cancelled as unknown[]) : undefined;
  if (cancelled?.includes(turn.uuid)) {
    outcomes.onCancelledBeforeStart();
    return { applied: true };
  }
  // Older rules (no `cancelled` list): input listed as still queued WILL run. A started turn's input
  // re-queued, or a later turn's input held behind earlier work, is not stopped: the stop is refused,
  // and a retry can stop it once it runs.
  if (cancelled === undefined && stillQueued.includes(turn.uuid) && (turn.started || !options.firstTurnOfProcess)) {
    turn.interruptRequested = false;
    throw new AgentError({
      code: 'provider_rejected',
      message: 'The claude CLI did not apply the stop (the input was still queued). Interrupt again.',
      details: { reason: 'input_still_queued' },
    });
  }
  if (!startedWhenAsked) {
    // Not cancelled, so the CLI will run it: it had not read the line yet and answered as at idle
    // (`still_queued:[]`; the 2.1.332 binary does so on a process's first turn, on both transports),
    // or an older CLI kept the first turn's input queued. The stop holds: it is sent again as soon as
    // the turn starts (sent to a turn the first one did stop after all, it changes nothing).
    outcomes.onTurnNotReached();
  }
  return { applied: true };
}

/** The agent never answered the stop (control_timeout): it no longer reads its input. */
export function interruptUnanswered(error: unknown): boolean {
  return AgentError.isInstance(error) && error.details?.reason === 'control_timeout';
}
