import {
  AgentError,
  type PermissionMode,
  type SetPermissionModeCommand,
  type SetPermissionModeReceipt,
} from '@tether/protocol';
import type { AgentProviderV1Session } from '@tether/provider-spec';
import { decideOnOpenSession } from '../../state/session-machine.js';
import type { SessionEntry } from '../session-entry.js';
import { type CommandContext, accepted, requireCapability } from './command-context.js';
import type { CommandFingerprint } from '../command-fingerprint.js';

/** Changes the mode live; a mode the running agent cannot enter needs restart: true (the conversation resumes). */
export async function setPermissionMode(
  context: CommandContext,
  command: SetPermissionModeCommand,
  fingerprint: CommandFingerprint,
): Promise<SetPermissionModeReceipt> {
  const found = context.entries.get(command.sessionId);
  const { entry } = accepted(found, decideOnOpenSession(found?.record, ', then change the mode.'));
  requireCapability(
    entry.provider,
    (can) => can.setMode,
    'change the permission mode of a running session',
    'set_mode',
  );
  let session = await context.providerSession(entry);
  if (session.requiresRestartFor(command.mode)) {
    if (command.restart !== true) {
      throw new AgentError({
        code: 'requires_restart',
        message: `The running agent cannot enter ${command.mode} mode without a restart. Send set_permission_mode again with restart: true to restart it in that mode (the conversation resumes), or choose another.`,
        details: { reason: command.mode },
      });
    }
    // A mode the agent would refuse to launch in (bypass as root without IS_SANDBOX) is refused
    // before the restart: stopping the agent for it would change the session for nothing.
    session.refuseUnlaunchableMode?.(command.mode);
    session = await restartAgent(context, entry, command.mode);
  }
  // Until the command's own event is written: the agent's report of the change may come before or after its answer.
  entry.modesBeingSet.push(command.mode);
  try {
    const mode = await session.doSetPermissionMode(command.mode);
    const changed = mode !== entry.record.permissionMode || entry.record.configuration.permissionMode !== mode;
    const receipt: SetPermissionModeReceipt = {
      type: 'set_permission_mode',
      commandId: command.commandId,
      sessionId: command.sessionId,
      mode,
    };
    await context.write(
      entry,
      changed ? [{ type: 'session.mode_changed', mode, source: 'command' }] : [],
      receipt,
      fingerprint,
    );
    return receipt;
  } finally {
    entry.modesBeingSet.splice(entry.modesBeingSet.indexOf(command.mode), 1);
  }
}

/**
 * Stops the agent so the mode applies from its next launch (the next turn resumes the conversation).
 * Never while a run is active: stopping the agent would end that run.
 */
async function restartAgent(
  context: CommandContext,
  entry: SessionEntry,
  mode: PermissionMode,
): Promise<AgentProviderV1Session> {
  if (entry.record.activeRunId !== null) {
    throw new AgentError({
      code: 'run_active',
      message: `Restarting the agent in ${mode} mode would end the active run. Wait for it to end (or interrupt it), then try again.`,
      details: { reason: 'restart' },
    });
  }
  await context.stopProcess(entry, 'release');
  const session = await context.providerSession(entry);
  if (session.requiresRestartFor(mode)) {
    throw new AgentError({
      code: 'requires_restart',
      message: `The agent cannot enter ${mode} mode even after a restart. Open a new session with permissionMode "${mode}", or choose another mode.`,
      details: { reason: mode },
    });
  }
  return session;
}
