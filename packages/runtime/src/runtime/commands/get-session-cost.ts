import type { GetSessionCostCommand, GetSessionCostReceipt } from '@tether/protocol';
import { decideOnOpenSession } from '../../state/session-machine.js';
import { type CommandContext, accepted, requireCapability } from './command-context.js';
import type { CommandFingerprint } from '../command-fingerprint.js';

/** The session's cost as Tether counted it, with the agent's own report beside it; records nothing but the receipt. */
export async function getSessionCost(
  context: CommandContext,
  command: GetSessionCostCommand,
  fingerprint: CommandFingerprint,
): Promise<GetSessionCostReceipt> {
  const found = context.entries.get(command.sessionId);
  const { entry } = accepted(found, decideOnOpenSession(found?.record, ' first.'));
  requireCapability(
    entry.provider,
    (can) => can.sessionCost ?? can.usage,
    'report its own session cost (get_session_cost)',
    'session_cost',
  );
  const { report } = await (await context.providerSession(entry)).doGetSessionCost();
  const receipt: GetSessionCostReceipt = {
    type: 'get_session_cost',
    commandId: command.commandId,
    sessionId: command.sessionId,
    costUsd: entry.record.usage.costUsd,
    report: report.slice(0, 10_000),
  };
  await context.write(entry, [], receipt, fingerprint);
  return receipt;
}
