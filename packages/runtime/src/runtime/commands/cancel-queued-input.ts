import {
  AgentError,
  type CancelQueuedInputCommand,
  type CancelQueuedInputReceipt,
  type QueuedInput,
} from '@tether/protocol';
import { decideCancelQueuedInput, inputNotQueued, queuedInputCancellations } from '../../state/session-machine.js';
import type { SessionEntry } from '../session-entry.js';
import { type CommandContext, accepted } from './command-context.js';
import type { CommandFingerprint } from '../command-fingerprint.js';

/**
 * Withdraws a queued follow-up: an after_turn input before it starts (it never reaches the agent),
 * a steer before the agent took it into the run (the provider takes it back). Either ends
 * input.cancelled, withdrawn; one that started, was folded in or ended is refused input_not_queued.
 */
export async function cancelQueuedInput(
  context: CommandContext,
  command: CancelQueuedInputCommand,
  fingerprint: CommandFingerprint,
): Promise<CancelQueuedInputReceipt> {
  const found = context.entries.get(command.sessionId);
  const { entry, decision } = accepted(found, decideCancelQueuedInput(found?.record, command));
  const receipt: CancelQueuedInputReceipt = {
    type: 'cancel_queued_input',
    commandId: command.commandId,
    sessionId: command.sessionId,
    inputId: command.inputId,
  };
  if (decision.steer) await withdrawSteer(context, entry, decision.steer);
  await context.write(entry, decision.events, receipt, fingerprint);
  context.inputs.drop(command.inputId);
  return receipt;
}

/** Asks the agent to give a steer back; its input.cancelled part (withdrawn) is in the log before the receipt. */
async function withdrawSteer(context: CommandContext, entry: SessionEntry, steer: QueuedInput): Promise<void> {
  // Its run not yet handed to the agent, the steer waits here (submit-turn's steer): withdrawn here.
  if (entry.isHandingOver(steer.runId)) {
    context.log.stage(entry, queuedInputCancellations([steer], 'withdrawn'));
    await context.writer.flush();
    return;
  }
  const session = await context.providerSession(entry);
  if (!session.doWithdrawSteer) {
    throw new AgentError({
      code: 'input_not_queued',
      message: `Input ${steer.inputId} was steered, and the ${entry.record.provider} provider cannot take a steer back. Interrupt the run (interrupt_run) to stop it before the agent takes it in.`,
      details: { reason: 'steered' },
    });
  }
  const { withdrawn } = await session.doWithdrawSteer({ inputId: steer.inputId });
  // Not withdrawn: the agent took it in (its input.folded came or follows).
  if (!withdrawn) throw inputNotQueued(steer.inputId).refusal;
  // The provider reports the cancellation itself; one it left out is recorded here.
  if ((entry.record.queuedInputs ?? []).some((queued) => queued.inputId === steer.inputId))
    context.log.stage(entry, queuedInputCancellations([steer], 'withdrawn'));
  await context.writer.flush();
}
