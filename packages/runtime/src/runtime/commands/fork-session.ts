import { type ForkSessionCommand, type ForkSessionReceipt, newSessionId } from '@tether/protocol';
import { decideFork } from '../../state/conversation-branches.js';
import { branchEvents, compactedRuns } from './branch-events.js';
import { createForkRecord } from '../session-entry.js';
import { now } from '../session-log.js';
import { type CommandContext, accepted, requireCapability } from './command-context.js';
import { namingTheRunsSession } from './run-of-another-session.js';
import { admitNewSession, openedEvent, readyEvents } from './open-session.js';
import { restoreWorkspace } from '../session-workspace.js';
import type { CommandFingerprint } from '../command-fingerprint.js';
import { sessionNotFound } from '../runtime-errors.js';
import type { SessionEntry } from '../session-entry.js';

/**
 * A new session whose agent starts from a copy of the source's conversation (all of it, or up to
 * a run), in the source's workspace (the same directory: a worktree is shared, not copied). The fork's opening and the source's session.forked are one transaction with the receipt:
 * neither session ever names a fork the other does not have.
 */
export async function forkSession(
  context: CommandContext,
  command: ForkSessionCommand,
  fingerprint: CommandFingerprint,
): Promise<ForkSessionReceipt> {
  const found = context.entries.get(command.sessionId);
  if (!found) throw sessionNotFound();
  requireCapability(found.provider, (can) => can.fork, 'fork a session', 'fork');
  // Alone among the source's lifecycle changes: its delete cannot take the workspace the fork is given.
  return namingTheRunsSession(context.store, command.sessionId, command.atRunId, () =>
    found.changeLifecycle(() => forkEntry(context, found, command, fingerprint)),
  );
}

async function forkEntry(
  context: CommandContext,
  found: SessionEntry,
  command: ForkSessionCommand,
  fingerprint: CommandFingerprint,
): Promise<ForkSessionReceipt> {
  if (found.removed) throw sessionNotFound();
  const runs = await context.store.listRuns(command.sessionId);
  // Only a fork at a run can be cut before a compaction.
  const compacted =
    command.atRunId !== undefined
      ? compactedRuns(await branchEvents(context.store, command.sessionId))
      : new Set<string>();
  // Decided after the runs were read: a run may have started meanwhile.
  const source = context.entries.get(command.sessionId);
  const forkSessionId = newSessionId();
  const { entry, decision } = accepted(source, decideFork(source?.record, command, { runs, forkSessionId, compacted }));
  // The fork works in its source's workspace; a closed source's may have been released (made again then).
  const sourceStatus = entry.record.workspaceStatus;
  const workspaceStatus =
    sourceStatus?.state === 'ready' ? sourceStatus : await restoreWorkspace(context.workspaces, entry.record);
  return context.openSessions.hold(async (counted) => {
    const record = {
      ...createForkRecord(entry.record, {
        sessionId: forkSessionId,
        at: now(),
        forkedFrom: decision.forkedFrom,
        copyConversation: decision.copyConversation,
      }),
      workspaceStatus,
    };
    const opening = [openedEvent(record, decision.forkedFrom), ...readyEvents(workspaceStatus)];
    const receipt: ForkSessionReceipt = {
      type: 'fork_session',
      commandId: command.commandId,
      sessionId: command.sessionId,
      forkSessionId,
      atRunId: decision.forkedFrom.runId,
    };
    await admitNewSession(context, record, entry.provider, counted, (fork) =>
      context.writeTogether(
        [
          { entry: fork, bodies: opening },
          { entry, bodies: decision.events },
        ],
        receipt,
        fingerprint,
      ),
    );
    return receipt;
  });
}
