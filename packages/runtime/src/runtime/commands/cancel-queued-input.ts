import { AgentError, type CancelQueuedInputCommand, type CancelQueuedInputReceipt } from '@tether/protocol';
import type { CommandContext } from './command-context.js';

/**
 * Withdraws a queued follow-up (input.cancelled, withdrawn). TODO(issue 19): the runtime's queue;
 * until it exists no input is ever queued, so every id is refused.
 */
export async function cancelQueuedInput(
  _context: CommandContext,
  command: CancelQueuedInputCommand,
  _fingerprint: string,
): Promise<CancelQueuedInputReceipt> {
  throw new AgentError({
    code: 'input_not_queued',
    message: `No queued input ${command.inputId} waits in this session: it started, was folded into its run or ended already (see its input.* events).`,
  });
}
