import {
  type ForkSessionCommand,
  type ForkSessionReceipt,
  describeConfiguration,
  newSessionId,
} from '@tether/protocol';
import { decideFork } from '../../state/conversation-branches.js';
import { SessionEntry, createForkRecord } from '../session-entry.js';
import { now } from '../session-log.js';
import { type CommandContext, accepted, requireCapability } from './command-context.js';

/**
 * A new session whose agent starts from a copy of the source's conversation (all of it, or up to
 * a run). The fork's opening and the source's session.forked are one transaction with the receipt:
 * neither session ever names a fork the other does not have.
 */
export async function forkSession(
  context: CommandContext,
  command: ForkSessionCommand,
  fingerprint: string,
): Promise<ForkSessionReceipt> {
  const found = context.entries.get(command.sessionId);
  if (found) requireCapability(found.provider, (can) => can.fork, 'fork a session', 'fork');
  const runs = found ? await context.store.listRuns(command.sessionId) : [];
  // Decided after the runs were read: a run may have started meanwhile.
  const source = context.entries.get(command.sessionId);
  const forkSessionId = newSessionId();
  const { entry, decision } = accepted(source, decideFork(source?.record, command, { runs, forkSessionId }));
  return context.openSessions.hold(async (counted) => {
    const record = createForkRecord(entry.record, {
      sessionId: forkSessionId,
      at: now(),
      forkedFrom: decision.forkedFrom,
      copyConversation: decision.copyConversation,
    });
    const fork = new SessionEntry(record, entry.provider);
    fork.markInteractionsLoaded();
    // Finds the agent and checks the settings before anything is recorded; spawns nothing.
    await fork.attachProvider(context.emitFor(fork));
    const receipt: ForkSessionReceipt = {
      type: 'fork_session',
      commandId: command.commandId,
      sessionId: command.sessionId,
      forkSessionId,
      atRunId: decision.forkedFrom.runId,
    };
    context.entries.add(fork);
    counted();
    const opened = {
      type: 'session.opened' as const,
      provider: record.provider,
      workspace: record.workspace,
      configuration: describeConfiguration(record.configuration),
      ephemeral: false,
      reopened: false,
      forkedFrom: decision.forkedFrom,
    };
    try {
      await context.writeTogether(
        [
          { entry: fork, bodies: [opened] },
          { entry, bodies: decision.events },
        ],
        receipt,
        fingerprint,
      );
    } catch (error) {
      context.entries.remove(fork);
      await fork.stopProvider('close');
      throw error;
    }
    return receipt;
  });
}
