import {
  type EventBodyOfType,
  type OpenSessionCommand,
  type OpenSessionReceipt,
  describeConfiguration,
} from '@tether/protocol';
import type { AgentProviderV1 } from '@tether/provider-spec';
import type { SessionRecord } from '../../store/tether-store.js';
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
  const receipt: OpenSessionReceipt = {
    type: 'open_session',
    commandId: command.commandId,
    sessionId: record.sessionId,
  };
  await admitNewSession(context, record, provider, counted, (entry) =>
    context.write(entry, [openedEvent(record)], receipt, fingerprint),
  );
  return receipt;
}

/** A new session's first event. */
export function openedEvent(
  record: SessionRecord,
  forkedFrom?: SessionRecord['forkedFrom'],
): EventBodyOfType<'session.opened'> {
  return {
    type: 'session.opened',
    provider: record.provider,
    workspace: record.workspace,
    configuration: describeConfiguration(record.configuration),
    ephemeral: record.ephemeral,
    reopened: false,
    ...(forkedFrom ? { forkedFrom } : {}),
  };
}

/**
 * Puts a new session in memory, counted as open, once its provider accepted it (the configuration
 * checked and the agent found; nothing spawned), and records its opening with `write`; a write that
 * fails takes it out again, with nothing recorded.
 */
export async function admitNewSession(
  context: CommandContext,
  record: SessionRecord,
  provider: AgentProviderV1 | null,
  counted: () => void,
  write: (entry: SessionEntry) => Promise<void>,
): Promise<SessionEntry> {
  const entry = new SessionEntry(record, provider);
  entry.markInteractionsLoaded();
  await entry.attachProvider(context.emitFor(entry));
  context.entries.add(entry);
  counted();
  try {
    await write(entry);
  } catch (error) {
    context.entries.remove(entry);
    await entry.stopProvider('close');
    throw error;
  }
  return entry;
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
