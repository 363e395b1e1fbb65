import { AgentError } from '@tether/protocol';
import type { ClaudeConnection } from '../connection/claude-connection.js';
import type { ActiveTurn } from '../translate/translator-state.js';

/**
 * Sends the interrupt request for a turn and reads its receipt. Where the transport can ask for
 * cancel_queued (the cli transport), a stop means stop: queued input is dropped, not run afterwards.
 * The receipt's shape (a `cancelled` list or not) tells which rules apply, so a transport without
 * cancel_queued (the Agent SDK's interrupt()) and an older CLI get the older rules.
 */
export async function requestInterrupt(
  connection: ClaudeConnection,
  turn: ActiveTurn,
  onCancelledBeforeStart: () => void,
  options: { firstTurnOfProcess: boolean; timeoutMs: number },
): Promise<{ applied: boolean }> {
  const response = (await connection.request({ subtype: 'interrupt' }, { timeoutMs: options.timeoutMs })) as
    | { still_queued?: unknown; cancelled?: unknown }
    | undefined;
  const stillQueued = Array.isArray(response?.still_queued) ? (response.still_queued as unknown[]) : [];
  const cancelled = Array.isArray(response?.cancelled) ? (response.cancelled as unknown[]) : undefined;
  if (cancelled?.includes(turn.uuid)) {
    // The input never started, so no result will come for it: the receipt is the end of the run.
    onCancelledBeforeStart();
    return { applied: true };
  }
  // Without cancel_queued, input the receipt lists as still queued WILL run, with one exception: a
  // stop before the process's first turn started is latched onto that turn, which starts aborted.
  const latched = !turn.started && options.firstTurnOfProcess;
  if (cancelled === undefined && stillQueued.includes(turn.uuid) && !latched) {
    // Not stopped (a started turn's input re-queued, or input held behind earlier work); a retry can stop it once it runs.
    turn.interruptRequested = false;
    throw new AgentError({
      code: 'provider_rejected',
      message: 'The claude CLI did not apply the stop (the input was still queued). Interrupt again.',
      details: { reason: 'input_still_queued' },
    });
  }
  return { applied: true };
}

/** The agent never answered the stop (control_timeout): it no longer reads its input. */
export function interruptUnanswered(error: unknown): boolean {
  return AgentError.isInstance(error) && error.details?.reason === 'control_timeout';
}
