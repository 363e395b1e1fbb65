import { type InterruptRunCommand, type InterruptRunReceipt, toAgentError } from '@tether/protocol';
import { decideInterrupt } from '../../state/session-machine.js';
import { type CommandContext, accepted, requireCapability } from './command-context.js';
import type { CommandFingerprint } from '../command-fingerprint.js';

/** How long a stop's receipt waits for the run's end before it is committed anyway. */
const receiptHoldMs = 100;

/**
 * Asks the agent to stop the active run; the run ends (interrupted) with the agent's answer, not
 * here. With cancelQueued the session's queued after_turn inputs are cancelled first (otherwise
 * they run next); steers the agent has not taken end with the run either way.
 */
export async function interruptRun(
  context: CommandContext,
  command: InterruptRunCommand,
  fingerprint: CommandFingerprint,
): Promise<InterruptRunReceipt> {
  const found = context.entries.get(command.sessionId);
  const { entry, decision } = accepted(found, decideInterrupt(found?.record, command));
  requireCapability(entry.provider, (can) => can.interrupt, 'interrupt a run', 'interrupt');
  const { runId } = decision;
  const receipt: InterruptRunReceipt = {
    type: 'interrupt_run',
    commandId: command.commandId,
    sessionId: command.sessionId,
    runId,
  };
  if (runId === null) {
    // Nothing is running: a receipt (with the queue's cancellations, if asked), and nobody waits for a result that will not come.
    await context.write(entry, decision.events, receipt, fingerprint);
    return receipt;
  }
  const session = await context.providerSession(entry);
  // Watched from before the stop is written, so an end that comes at once is not missed.
  const ended = context.runEnded(runId, receiptHoldMs);
  // The intent is staged before the request is written, so a result that lands first still ends the
  // run as a stop and starts no input the host cancelled, and the log has the intent before that end.
  // It is committed with the receipt (or the stream's next commit), not on its own right after the
  // request: a commit there competed with the agent stopping, and a stop ended ~1 ms later
  // (docs/benchmarks.md, "Peers on the eighth day").
  const intent = entry.interruptRequested.has(runId) ? [] : [{ type: 'run.interrupt_requested' as const, runId }];
  if (intent.length > 0 || decision.events.length > 0) {
    entry.interruptRequested.add(runId);
    context.log.stage(entry, [...decision.events, ...intent]);
  }
  try {
    await session.doInterrupt({ runId });
  } catch (error) {
    entry.interruptRequested.delete(runId);
    // What was staged stays (the intent, the queue's cancellations), and is in the log by the time the caller hears.
    await context.writer.flush();
    throw toAgentError(error);
  }
  // The receipt is committed once the run has ended (or receiptHoldMs passed): a commit while the
  // agent stops competes with it for the CPU, and the stop ended later (docs/benchmarks.md, "Peers on
  // the tenth day"). What the stop needs durably, its intent, goes with the stream's next commit.
  await ended;
  // Once the run's end has reached its followers: resumed at once, this commit ran in the same round
  // of microtasks as the end's delivery, ahead of an in-process follower's, which then heard of the
  // end ~0.1 ms later (measured with the peers legs' stops).
  await new Promise((resolve) => setImmediate(resolve));
  await context.write(entry, [], receipt, fingerprint);
  return receipt;
}
