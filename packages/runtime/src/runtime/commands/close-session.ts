import type { CloseSessionCommand, CloseSessionReceipt } from '@tether/protocol';
import { decideClose } from '../../state/session-machine.js';
import { withRunEndCancellations } from '../session-log.js';
import { type CommandContext, accepted } from './command-context.js';
import type { CommandFingerprint } from '../command-fingerprint.js';

/** Cancels queued inputs (session_closed), ends the active run (interrupted) and the session, stops its agent for good, then releases its workspace. */
export async function closeSession(
  context: CommandContext,
  command: CloseSessionCommand,
  fingerprint: CommandFingerprint,
): Promise<CloseSessionReceipt> {
  const found = context.entries.get(command.sessionId);
  const { entry, decision } = accepted(found, decideClose(found?.record, command));
  const receipt: CloseSessionReceipt = {
    type: 'close_session',
    commandId: command.commandId,
    sessionId: command.sessionId,
  };
  await context.write(entry, withRunEndCancellations(entry, decision.events, 'session_closed'), receipt, fingerprint);
  entry.clearAllTimers();
  // Never under a running agent: the worktree may be removed.
  await context.stopProcess(entry, 'close');
  await context.releaseWorkspace(entry);
  return receipt;
}
