import type { SetModelCommand, SetModelReceipt } from '@tether/protocol';
import { decideOnOpenSession } from '../../state/session-machine.js';
import { type CommandContext, accepted, requireCapability } from './command-context.js';
import type { CommandFingerprint } from '../command-fingerprint.js';

/** Changes the model live; recorded only when the agent's model (or the one it launches with) changes. */
export async function setModel(
  context: CommandContext,
  command: SetModelCommand,
  fingerprint: CommandFingerprint,
): Promise<SetModelReceipt> {
  const found = context.entries.get(command.sessionId);
  const { entry } = accepted(found, decideOnOpenSession(found?.record, ' first.'));
  requireCapability(entry.provider, (can) => can.setModel, 'change the model of a running session', 'set_model');
  const session = await context.providerSession(entry);
  const model = await session.doSetModel(command.model);
  const changed = model !== entry.record.model || entry.record.configuration.model !== model;
  const receipt: SetModelReceipt = {
    type: 'set_model',
    commandId: command.commandId,
    sessionId: command.sessionId,
    model,
  };
  await context.write(
    entry,
    changed ? [{ type: 'session.model_changed', model, source: 'command' }] : [],
    receipt,
    fingerprint,
  );
  return receipt;
}
