import {
  type EventBodyOfType,
  type OpenSessionCommand,
  type OpenSessionReceipt,
  type Workspace,
  type WorkspaceStatus,
  describeConfiguration,
  newSessionId,
} from '@tether/protocol';
import type { AgentProviderV1 } from '@tether/provider-spec';
import type { SessionRecord } from '../../store/tether-store.js';
import { decideReopen } from '../../state/session-machine.js';
import { SessionEntry, createSessionRecord } from '../session-entry.js';
import { sessionNotFound, unknownProvider } from '../runtime-errors.js';
import { now } from '../session-log.js';
import { announcesWorkspace, restoreWorkspace } from '../session-workspace.js';
import { type CommandContext, accepted, requireCapability } from './command-context.js';
import type { CommandFingerprint } from '../command-fingerprint.js';

/** A new session (holding a place under the open-session limit from the start), or a closed one reopened. */
export function openSession(
  context: CommandContext,
  command: OpenSessionCommand,
  fingerprint: CommandFingerprint,
): Promise<OpenSessionReceipt> {
  if (command.continueSession !== undefined) return reopen(context, command.continueSession, command, fingerprint);
  return context.openSessions.hold((counted) => openNew(context, command, fingerprint, counted));
}

async function openNew(
  context: CommandContext,
  command: OpenSessionCommand,
  fingerprint: CommandFingerprint,
  counted: () => void,
): Promise<OpenSessionReceipt> {
  const providerName = command.provider ?? context.defaultProvider;
  const provider = context.providers.get(providerName);
  if (!provider) throw unknownProvider(providerName, [...context.providers.keys()]);
  // parseCommand requires a workspace for a new session.
  const requested = command.workspace!;
  const acquirer = context.workspaces.of(requested.kind);
  // The id comes first: the acquirer names what it makes after it (a worktree's folder and branch).
  const sessionId = newSessionId();
  const prepared = await acquirer.prepare({ sessionId, workspace: requested });
  const workspace: Workspace =
    requested.kind === 'directory' ? { kind: 'directory', path: prepared.directory } : requested;
  const record = createSessionRecord(command, {
    sessionId,
    provider: providerName,
    workspace,
    workspaceStatus: prepared,
    at: now(),
  });
  const receipt: OpenSessionReceipt = { type: 'open_session', commandId: command.commandId, sessionId };
  let entry: SessionEntry;
  try {
    entry = await admitNewSession(context, record, provider, counted, (admitted) =>
      context.write(admitted, [openedEvent(record), ...readyEvents(prepared)], receipt, fingerprint),
    );
  } catch (error) {
    // Nothing was recorded: the workspace made for it would be left behind, named by no session.
    await acquirer.release(prepared, { discardChanges: false, inUse: false }).catch(() => undefined);
    throw error;
  }
  handOverReadyAgent(context, entry);
  if (command.startAgent) startAgent(context, entry);
  return receipt;
}

/** Tells the provider the new session's opening is recorded: it may hand it a process it holds ready. */
function handOverReadyAgent(context: CommandContext, entry: SessionEntry): void {
  void context.providerSession(entry).then(
    (session) => session.doOpened?.(),
    () => undefined,
  );
}

/**
 * Starts the session's agent in the background once its opening is recorded (the receipt does not
 * wait for it): an editor's new chat, whose first prompt then skips the agent's start-up. A start
 * that fails is told as a diagnostic, unless the session was closed meanwhile; the first turn starts
 * the agent again and reports what stops it.
 */
function startAgent(context: CommandContext, entry: SessionEntry): void {
  void context
    .providerSession(entry)
    .then((session) => session.doStart?.())
    .catch(() => {
      if (entry.record.state === 'closed') return;
      context.log.stage(entry, [{ type: 'diagnostic', level: 'warning', code: 'agent.start_failed' }]);
    });
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
 * session.workspace_ready for a workspace Tether made; none for a plain directory, which session.opened
 * already names and Tether never changes (its status is on the record all the same).
 */
export function readyEvents(workspace: WorkspaceStatus | null): EventBodyOfType<'session.workspace_ready'>[] {
  return workspace === null || !announcesWorkspace(workspace) ? [] : [{ type: 'session.workspace_ready', workspace }];
}

/**
 * Puts a new session in memory, counted as open, once its provider accepted it (the configuration
 * checked and the agent found; nothing spawned), claims it, and records its opening with `write`; a
 * write that fails takes it out again, with nothing recorded.
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
  await entry.attachProvider(context.outputFor(entry));
  context.entries.add(entry);
  counted();
  try {
    // A store shared with other runtimes writes only the sessions this one holds.
    await context.ownership.claim(record.sessionId);
    await write(entry);
  } catch (error) {
    context.entries.remove(entry);
    context.ownership.release([record.sessionId]);
    await entry.stopProvider('close');
    throw error;
  }
  return entry;
}

async function reopen(
  context: CommandContext,
  sessionId: string,
  command: OpenSessionCommand,
  fingerprint: CommandFingerprint,
): Promise<OpenSessionReceipt> {
  const found = context.entries.get(sessionId);
  if (!found) throw sessionNotFound();
  // Alone among the session's lifecycle changes: a delete under way is over first (then there is nothing to reopen).
  return found.changeLifecycle(() => reopenEntry(context, found, command, fingerprint));
}

async function reopenEntry(
  context: CommandContext,
  found: SessionEntry,
  command: OpenSessionCommand,
  fingerprint: CommandFingerprint,
): Promise<OpenSessionReceipt> {
  if (found.removed) throw sessionNotFound();
  const sessionId = found.record.sessionId;
  const { entry, decision } = accepted(found, decideReopen(found.record, command));
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
  // Its worktree may have been removed at close (it held no work): made again before anything is recorded.
  const restored = reopening ? await restoreWorkspace(context.workspaces, entry.record) : null;
  const bodies = [...decision.events, ...readyEvents(restored)];
  const amend = restored ? (record: SessionRecord) => ({ ...record, workspaceStatus: restored }) : undefined;
  const receipt: OpenSessionReceipt = { type: 'open_session', commandId: command.commandId, sessionId };
  const write = () => context.writeTogether([{ entry, bodies, ...(amend ? { amend } : {}) }], receipt, fingerprint);
  // Reopening a closed session opens one more; an open one stays as it is.
  await (reopening ? context.openSessions.hold(write) : write());
  if (command.startAgent) startAgent(context, entry);
  return receipt;
}
