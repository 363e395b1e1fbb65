import type { EventBody } from '@tether/protocol';
import type { AgentProviderV1 } from '@tether/provider-spec';
import type { EventWriter } from '../log/event-writer.js';
import type { SessionRecord, TetherStore } from '../store/tether-store.js';
import { SessionEntry } from './session-entry.js';
import { now, withRunEndCancellations } from './session-log.js';
import { type WorkspaceParts, restoreAtStartup } from './session-workspace.js';

export interface RecoveryParts {
  readonly store: TetherStore;
  readonly writer: EventWriter;
  readonly providers: ReadonlyMap<string, AgentProviderV1>;
}

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
 * Loads the open sessions (and closed ones whose process a crash may have left), restores their
 * workspaces, ends what a crashed predecessor left running, and completes its open runs and interactions.
 */
export async function recoverOpenSessions(parts: RecoveryParts & WorkspaceParts): Promise<void> {
  const { store, log, entries } = parts;
  const at = now();
  const leftOver = new Map<AgentProviderV1, SessionEntry[]>();
  for (const record of await store.loadOpenSessions()) {
    const entry = entryOf(parts, record);
    entries.add(entry);
    if (record.state !== 'closed') await restoreAtStartup(parts, entry);
    if (record.liveProcess !== null && entry.provider)
      leftOver.set(entry.provider, [...(leftOver.get(entry.provider) ?? []), entry]);
    if (record.activeRunId === null) continue;
    entry.activeRun = (await store.getRun(record.activeRunId)) ?? null;
    await entry.loadInteractions(store);
    const completion: EventBody = {
      type: 'run.completed',
      runId: record.activeRunId,
      outcome: 'failed',
      error: {
        code: 'runtime_restarted',
        message:
          'The runtime stopped while this run was active; its result is unknown. Submit the turn again if it is still needed.',
        retryable: true,
      },
    };
    log.stage(entry, withRunEndCancellations(entry, [completion], 'runtime_restarted'), at);
  }
  for (const [provider, recovered] of leftOver) {
    await provider.doRecover?.(recovered.map((entry) => entry.record.liveProcess!)).catch(() => undefined);
    for (const entry of recovered) log.stage(entry, [{ type: 'session.process_stopped', reason: 'restarted' }], at);
  }
  await parts.writer.flush();
  // Closed sessions loaded only for their left-over process may leave memory now.
  for (const entry of entries.entries()) entries.touch(entry);
}
