import type { GetContextUsageCommand, GetContextUsageReceipt } from '@tether/protocol';
import { decideOnOpenSession } from '../../state/session-machine.js';
import { type CommandContext, accepted, requireCapability } from './command-context.js';
import type { CommandFingerprint } from '../command-fingerprint.js';

/** The agent's own account of its context window; records nothing but the receipt. */
export async function getContextUsage(
  context: CommandContext,
  command: GetContextUsageCommand,
  fingerprint: CommandFingerprint,
): Promise<GetContextUsageReceipt> {
  const found = context.entries.get(command.sessionId);
  const { entry } = accepted(found, decideOnOpenSession(found?.record, ' first.'));
  requireCapability(entry.provider, (can) => can.controls, 'report context usage', 'context_usage');
  const usage = await (await context.providerSession(entry)).doGetContextUsage();
  const receipt: GetContextUsageReceipt = {
    type: 'get_context_usage',
    commandId: command.commandId,
    sessionId: command.sessionId,
    usage,
  };
  await context.write(entry, [], receipt, fingerprint);
  return receipt;
}
