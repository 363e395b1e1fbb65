import type { CancelQueuedInputCommand, CancelQueuedInputReceipt } from '@tether/protocol';
import { decideCancelQueuedInput } from '../../state/session-machine.js';
import { type CommandContext, accepted } from './command-context.js';

/**
 * Withdraws a queued after_turn input before it starts (input.cancelled, withdrawn): it never
 * reaches the agent. A steer was handed to the agent when it was submitted, and one that started,
 * was folded in or ended is past withdrawing: both are refused with input_not_queued.
 */
export async function cancelQueuedInput(
  context: CommandContext,
  command: CancelQueuedInputCommand,
  fingerprint: string,
): Promise<CancelQueuedInputReceipt> {
  const found = context.entries.get(command.sessionId);
  const { entry, decision } = accepted(found, decideCancelQueuedInput(found?.record, command));
  const receipt: CancelQueuedInputReceipt = {
    type: 'cancel_queued_input',
    commandId: command.commandId,
    sessionId: command.sessionId,
    inputId: command.inputId,
  };
  await context.write(entry, decision.events, receipt, fingerprint);
  context.inputs.drop(command.inputId);
  return receipt;
}
