import { type OpenSessionCommand, type OpenSessionReceipt, describeConfiguration } from '@tether/protocol';
import { decideReopen } from '../../state/session-machine.js';
import { SessionEntry, createSessionRecord } from '../session-entry.js';
import { unknownProvider } from '../runtime-errors.js';
import { now } from '../session-log.js';
import { checkWorkspace } from '../workspace-check.js';
import { type CommandContext, accepted, requireCapability } from './command-context.js';

/** A new session (holding a place under the open-session limit from the start), or a closed one reopened. */
export function openSession(
  context: CommandContext,
  command: OpenSessionCommand,
  fingerprint: string,
): Promise<OpenSessionReceipt> {
  if (command.continueSession !== undefined) return reopen(context, command.continueSession, command, fingerprint);
  return context.openSessions.hold((counted) => openNew(context, command, fingerprint, counted));
}

async function openNew(
  context: CommandContext,
  command: OpenSessionCommand,
  fingerprint: string,
  counted: () => void,
): Promise<OpenSessionReceipt> {
  const providerName = command.provider ?? context.defaultProvider;
  const provider = context.providers.get(providerName);
  if (!provider) throw unknownProvider(providerName, [...context.providers.keys()]);
  // parseCommand requires a workspace for a new session.
  const workspace = await checkWorkspace(command.workspace!);
  const record = createSessionRecord(command, { provider: providerName, workspace, at: now() });
  const entry = new SessionEntry(record, provider);
  entry.markInteractionsLoaded();
  // Validates the configuration and finds the agent before anything is recorded; spawns nothing.
  await entry.attachProvider(context.emitFor(entry));
  const receipt: OpenSessionReceipt = {
    type: 'open_session',
    commandId: command.commandId,
    sessionId: record.sessionId,
  };
  context.entries.add(entry);
  counted();
  try {
    await context.write(
      entry,
      [
        {
          type: 'session.opened',
          provider: providerName,
          workspace,
          configuration: describeConfiguration(record.configuration),
          ephemeral: record.ephemeral,
          reopened: false,
        },
      ],
      receipt,
      fingerprint,
    );
  } catch (error) {
    context.entries.remove(entry);
    await entry.stopProvider('close');
    throw error;
  }
  return receipt;
}

async function reopen(
  context: CommandContext,
  sessionId: string,
  command: OpenSessionCommand,
  fingerprint: string,
): Promise<OpenSessionReceipt> {
  const found = context.entries.get(sessionId);
  const { entry, decision } = accepted(found, decideReopen(found?.record, command));
  const reopening = decision.events.length > 0;
  // A provider that cannot continue a conversation would silently start a new one under the old history.
  if (reopening)
    requireCapability(
      entry.provider,
      (can) => can.resume,
      "continue a closed session's conversation (resume); open a new session instead",
      'resume',
    );
  await entry.teardown;
  const receipt: OpenSessionReceipt = { type: 'open_session', commandId: command.commandId, sessionId };
  const write = () => context.write(entry, decision.events, receipt, fingerprint);
  // Reopening a closed session opens one more; an open one stays as it is.
  await (reopening ? context.openSessions.hold(write) : write());
  return receipt;
}
