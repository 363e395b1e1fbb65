import { AgentError, type EventBody } from '@tether/protocol';
import type { AgentProviderV1 } from '@tether/provider-spec';
import type { EventWriter } from '../log/event-writer.js';
import { queuedInputCancellations } from '../state/session-machine.js';
import { answeredByTheModel } from '../state/conversation-branches.js';
import type { SessionRecord, TetherStore } from '../store/tether-store.js';
import { SessionEntry } from './session-entry.js';
import { now, withRunEndCancellations } from './session-log.js';
import type { SessionOwnership } from './session-ownership.js';
import { type WorkspaceParts, restoreAtStartup } from './session-workspace.js';

export interface RecoveryParts {
  readonly store: TetherStore;
  readonly writer: EventWriter;
  readonly providers: ReadonlyMap<string, AgentProviderV1>;
}

/** What recovering sessions works with: the store, the sessions' workspaces, and which sessions are this runtime's. */
export type SessionRecoveryParts = RecoveryParts & WorkspaceParts & { readonly ownership: SessionOwnership };

/**
 * Why a recovered session's active run ended: this runtime's own predecessor stopped (a store it
 * holds alone), or the runtime that drove the session, one of several sharing the store, stopped.
 */
type Predecessor = 'this_runtime' | 'driving_runtime';

const runEndMessages: Record<Predecessor, string> = {
  this_runtime:
    'The runtime stopped while this run was active; its result is unknown. Submit the turn again if it is still needed.',
  driving_runtime:
    "The process driving this session (a daemon or a tether command) stopped while this run was active (it shut down, crashed, or lost the database for longer than its lease), and the session was taken over; the run's result is unknown. Submit the turn again if it is still needed: the conversation continues.",
};

function entryOf(parts: RecoveryParts, record: SessionRecord): SessionEntry {
  parts.writer.restoreLastSeq(record.sessionId, record.lastSeq);
  return new SessionEntry(record, parts.providers.get(record.provider) ?? null);
}

/** A closed session read back from the store; its row is current once what was staged is written. */
export async function loadClosedSession(parts: RecoveryParts, sessionId: string): Promise<SessionEntry | undefined> {
  await parts.writer.flush();
  const record = await parts.store.getSession(sessionId);
  return record && entryOf(parts, record);
}

/**
 * A session that is not in memory, read back for a command (or adopted by the orphan sweep). With a
 * store this runtime holds alone only closed sessions can be missing from memory. With a shared one,
 * the session is claimed first (session_owned_elsewhere while another live runtime drives it), read
 * again once held (its last holder can no longer write), and recovered if it is open: what its
 * holder left running is ended here.
 */
export async function loadSession(parts: SessionRecoveryParts, sessionId: string): Promise<SessionEntry | undefined> {
  if (!parts.ownership.shared) return loadClosedSession(parts, sessionId);
  await parts.writer.flush();
  // An unknown id claims nothing.
  if (!(await parts.store.getSession(sessionId))) return undefined;
  await parts.ownership.claim(sessionId);
  const record = await parts.store.getSession(sessionId);
  if (!record) {
    parts.ownership.release([sessionId]);
    return undefined;
  }
  const entry = entryOf(parts, record);
  if (record.state !== 'closed' || record.liveProcess !== null)
    await recoverSessions(parts, [entry], 'driving_runtime');
  return entry;
}

/**
 * At start-up: loads the open sessions (and closed ones whose process a crash may have left) and
 * recovers them. With a shared store only those this runtime can claim: one another live runtime
 * drives stays there.
 */
export async function recoverOpenSessions(
  parts: SessionRecoveryParts,
  include: (sessionId: string) => boolean = () => true,
): Promise<void> {
  const { store, entries, ownership } = parts;
  const recovered: SessionEntry[] = [];
  for (const loaded of await store.loadOpenSessions()) {
    if (!include(loaded.sessionId)) continue;
    const record = ownership.shared ? await claimed(parts, loaded.sessionId) : loaded;
    if (!record) continue;
    const entry = entryOf(parts, record);
    entries.add(entry);
    recovered.push(entry);
  }
  await recoverSessions(parts, recovered, ownership.shared ? 'driving_runtime' : 'this_runtime');
  // Closed sessions loaded only for their left-over process may leave memory now.
  for (const entry of entries.entries()) entries.touch(entry);
}

/** The session's row once this runtime holds it; undefined when another live runtime does (or it is gone). */
async function claimed(parts: SessionRecoveryParts, sessionId: string): Promise<SessionRecord | undefined> {
  try {
    await parts.ownership.claim(sessionId);
  } catch (error) {
    if (AgentError.isInstance(error) && error.code === 'session_owned_elsewhere') return undefined;
    throw error;
  }
  const record = await parts.store.getSession(sessionId);
  if (!record) parts.ownership.release([sessionId]);
  return record;
}

/**
 * The crashed run was the first of its conversation: no run of the session ever said where the
 * conversation stood (a checkpoint) or was answered by the model, and it is no copy (a fork or a rewind). The agent writes its
 * transcript behind what it reports, so a host that died during that first turn may leave a
 * conversation id with nothing under it, and resuming it would fail every later turn
 * (resume_not_found). The next turn starts the conversation anew instead, as a provider does when
 * its own agent ends so (claude.conversation_not_kept); only the crashed turn is lost either way.
 */
async function conversationMayBeUnkept(store: TetherStore, record: SessionRecord): Promise<boolean> {
  if (record.providerSessionId === null || record.copyConversation !== null || record.forkedFrom) return false;
  // Its agent keeps no transcript at all: there is never anything to resume after its process ended.
  if (record.ephemeral) return true;
  const runs = await store.listRuns(record.sessionId);
  // A turn the model answered is as sure a sign as a checkpoint: runs stored before checkpoints were
  // recorded (an older Tether's) have none.
  return !runs.some((run) => run.checkpoint !== null || answeredByTheModel(run));
}

function startsAnew(record: SessionRecord): SessionRecord {
  return { ...record, providerSessionId: null };
}

/**
 * Restores the sessions' workspaces, ends what a stopped predecessor left running (its recorded
 * agent process, if it runs on this machine: the provider checks), cancels its queued inputs and
 * completes its open runs (failed, runtime_restarted) and interactions.
 */
async function recoverSessions(
  parts: SessionRecoveryParts,
  recovered: readonly SessionEntry[],
  predecessor: Predecessor,
): Promise<void> {
  const { store, log } = parts;
  const at = now();
  const leftOver = new Map<AgentProviderV1, SessionEntry[]>();
  for (const entry of recovered) {
    const record = entry.record;
    if (record.state !== 'closed') await restoreAtStartup(parts, entry);
    if (record.liveProcess !== null && entry.provider)
      leftOver.set(entry.provider, [...(leftOver.get(entry.provider) ?? []), entry]);
    // A queue's content lived in the stopped runtime's memory: nothing queued starts by itself, and nothing is lost silently.
    const queued = record.queuedInputs ?? [];
    if (queued.length > 0) log.stage(entry, queuedInputCancellations(queued, 'runtime_restarted'), at);
    if (record.activeRunId === null) continue;
    entry.activeRun = (await store.getRun(record.activeRunId)) ?? null;
    await entry.loadInteractions(store);
    await entry.loadOpenToolCalls(store, record.activeRunId);
    const completion: EventBody = {
      type: 'run.completed',
      runId: record.activeRunId,
      outcome: 'failed',
      error: { code: 'runtime_restarted', message: runEndMessages[predecessor], retryable: true },
    };
    const bodies = withRunEndCancellations(entry, [completion], 'runtime_restarted');
    if (await conversationMayBeUnkept(store, record)) {
      // Said, as the provider says it when its own agent ends so: the next turn has no earlier one to go on from.
      const notice: EventBody = {
        type: 'diagnostic',
        runId: record.activeRunId,
        level: 'warning',
        code: 'session.conversation_not_kept',
      };
      log.stageAmended(entry, [notice, ...bodies], startsAnew, at);
    } else log.stage(entry, bodies, at);
  }
  for (const [provider, stopped] of leftOver) {
    await provider.doRecover?.(stopped.map((entry) => entry.record.liveProcess!)).catch(() => undefined);
    for (const entry of stopped) log.stage(entry, [{ type: 'session.process_stopped', reason: 'restarted' }], at);
  }
  await parts.writer.flush();
}
