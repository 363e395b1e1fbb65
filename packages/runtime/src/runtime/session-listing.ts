import type { SessionSnapshot, SessionState } from '@tether/protocol';
import { isAfter, newestFirst } from '../store/session-order.js';
import type { SessionCounts, SessionPosition, SessionRecord, TetherStore } from '../store/tether-store.js';
import type { SessionEntry } from './session-entry.js';

export interface ListSessionsOptions {
  /** At most this many (default: all). */
  readonly limit?: number;
  /** Sessions after this one in newest-first order (a page's last session continues the listing). */
  readonly before?: SessionPosition;
  readonly state?: SessionState;
}

/**
 * What a listing reads: the sessions in memory (the truth for them) and the store (closed sessions;
 * every session when it is shared, since other runtimes' open sessions are not in this one's memory).
 */
export interface ListingSource {
  readonly store: TetherStore;
  /** Other runtimes share the store. */
  readonly shared: boolean;
  resident(): SessionEntry[];
  snapshotOfEntry(entry: SessionEntry): Promise<SessionSnapshot>;
  snapshotOfRecord(record: SessionRecord): SessionSnapshot;
}

const storeBatchSize = 500;

/**
 * Sessions newest first, merged from memory and the store. Every open session is in memory, where
 * its state is current even while its last change is being written; closed sessions not in memory
 * come from the store, whose row for them is final. A session in memory is taken from memory
 * whatever its row says, including one that left memory while the store was read.
 */
export async function listSessions(source: ListingSource, options: ListSessionsOptions): Promise<SessionSnapshot[]> {
  const limit = options.limit ?? Number.POSITIVE_INFINITY;
  if (!(limit > 0)) return [];
  const { before, state } = options;
  const residentAtStart = source.resident();
  // Alone on its store, only closed sessions can be missing from memory: a listing of an open state never reads the store.
  let exhausted = !source.shared && state !== undefined && state !== 'closed';
  const storeState = source.shared ? state : 'closed';
  let cursor = before;
  const rows: SessionRecord[] = [];
  for (;;) {
    if (!exhausted) {
      const size = Math.min(storeBatchSize, Number.isFinite(limit) ? limit : storeBatchSize);
      const batch = await source.store.listSessions({
        limit: size,
        ...(storeState ? { state: storeState } : {}),
        ...(cursor ? { before: cursor } : {}),
      });
      rows.push(...batch);
      exhausted = batch.length < size;
      cursor = batch.at(-1) ?? cursor;
      // Everything is wanted: read to the end before merging once.
      if (!exhausted && !Number.isFinite(limit)) continue;
    }
    const resident = new Map<string, SessionEntry>();
    for (const entry of [...residentAtStart, ...source.resident()])
      if (!entry.removed) resident.set(entry.record.sessionId, entry);
    const matching = (position: SessionPosition & { state: SessionState }) =>
      (state === undefined || position.state === state) && isAfter(position, before);
    const candidates: Array<SessionEntry | SessionRecord> = [
      ...[...resident.values()].filter((entry) => matching(entry.record)),
      ...rows.filter((row) => !resident.has(row.sessionId) && matching(row)),
    ];
    const positionOf = (candidate: SessionEntry | SessionRecord) =>
      'record' in candidate ? candidate.record : candidate;
    candidates.sort((left, right) => newestFirst(positionOf(left), positionOf(right)));
    // Past the last row read, a closed session may still be unread: only what comes before it is complete.
    const complete =
      exhausted || cursor === undefined
        ? candidates
        : candidates.filter((candidate) => newestFirst(positionOf(candidate), cursor!) <= 0);
    if (exhausted || complete.length >= limit) {
      return Promise.all(
        complete
          .slice(0, limit)
          .map((candidate) =>
            'record' in candidate ? source.snapshotOfEntry(candidate) : source.snapshotOfRecord(candidate),
          ),
      );
    }
  }
}

/** Open sessions by state from memory; closed ones as every stored session that is not open in memory. */
export async function countSessionsByState(source: ListingSource): Promise<SessionCounts> {
  const stored = await source.store.countSessionsByState();
  // Shared, most open sessions are other runtimes': the rows count them (this runtime's lag its memory by a commit at most).
  if (source.shared) return stored;
  const counts: SessionCounts = { idle: 0, running: 0, waiting: 0, closed: 0 };
  for (const entry of source.resident()) if (entry.record.state !== 'closed') counts[entry.record.state] += 1;
  const storedTotal = stored.idle + stored.running + stored.waiting + stored.closed;
  counts.closed = Math.max(0, storedTotal - counts.idle - counts.running - counts.waiting);
  return counts;
}
