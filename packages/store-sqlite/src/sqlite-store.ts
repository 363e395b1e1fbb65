import type { DatabaseSync, SQLInputValue } from 'node:sqlite';
import type { ProtocolEvent } from '@tether/protocol';
import {
  type CommitUnit,
  runRowValues,
  type SessionCounts,
  type SessionPageQuery,
  type SessionRecord,
  receiptExists,
  type TetherStore,
} from '@tether/runtime';
import type { DataDirectoryLock } from './data-directory-lock.js';
import { IdleCheckpoint } from './idle-checkpoint.js';
import {
  blobFromRow,
  eventFromRow,
  interactionFromRow,
  interactionParameters,
  receiptFromRow,
  runFromRow,
  sessionFromRow,
  sessionListingParameters,
  sessionParameters,
} from './record-rows.js';
import { guardStore, storeFailure } from './store-failure.js';
import { SessionUpdates } from './session-updates.js';
import { prepareStatements, type StoreStatements } from './store-statements.js';
import { inImmediateTransaction } from './transaction.js';

export interface SqliteStore extends TetherStore {
  readonly dataDir: string;
  readonly databasePath: string;
}

export interface SqliteStoreParts {
  readonly database: DatabaseSync;
  readonly dataDir: string;
  readonly databasePath: string;
  readonly lock: DataDirectoryLock;
}

function runIdOf(event: ProtocolEvent): string | null {
  return (event as { runId?: string }).runId ?? null;
}

/**
 * Each session's last stored seq as this connection knows it: read once, then kept as it commits.
 * The database is held under SQLite's exclusive lock, so no other connection can add events.
 */
type StoredSeqs = Map<string, number>;

/**
 * How many sessions the store remembers what it last wrote of (seq, row): the most recently
 * written. Beyond them a commit reads what it needs from the database, so memory follows the
 * sessions being written, not every session a long-running daemon ever wrote.
 */
const rememberedSessions = 1_000;

/** Sets `key` as the most recently written, forgetting the least recently written beyond the bound. */
function remember<Value>(memory: Map<string, Value>, key: string, value: Value): void {
  memory.delete(key);
  memory.set(key, value);
  if (memory.size > rememberedSessions) memory.delete(memory.keys().next().value!);
}

/** Each session's record as this connection last wrote it. */
type StoredSessions = Map<string, SessionRecord>;

/**
 * Refuses (before any write) events that do not continue each session's stored sequence exactly;
 * returns each session's last seq once they are stored.
 */
function checkSequence(
  statements: StoreStatements,
  storedSeqs: StoredSeqs,
  events: readonly ProtocolEvent[],
): Map<string, number> {
  const next = new Map<string, number>();
  for (const event of events) {
    const previous =
      next.get(event.sessionId) ??
      storedSeqs.get(event.sessionId) ??
      Number(statements.lastSeq.get(event.sessionId)?.['last_seq'] ?? 0);
    if (event.seq !== previous + 1) {
      throw storeFailure(
        `Refused to store event ${event.seq} of a session whose next event is ${previous + 1}; nothing was written.`,
        'sequence_conflict',
      );
    }
    next.set(event.sessionId, event.seq);
  }
  return next;
}

/** What a unit wrote, remembered once its transaction is committed. */
interface Written {
  readonly lastSeqs: Map<string, number>;
  readonly sessions: Map<string, SessionRecord>;
}

function writeUnit(
  statements: StoreStatements,
  sessionUpdates: SessionUpdates,
  stored: { seqs: StoredSeqs; sessions: StoredSessions },
  unit: CommitUnit,
): Written {
  const lastSeqs = checkSequence(statements, stored.seqs, unit.events);
  // First: a receipt already stored refuses the unit before anything else of it is written.
  for (const receipt of unit.receipts) {
    const { changes } = statements.insertReceipt.run(
      receipt.commandId,
      receipt.fingerprint,
      JSON.stringify(receipt.receipt),
      receipt.at,
    );
    if (Number(changes) === 0) throw receiptExists();
  }
  for (const event of unit.events) {
    statements.insertEvent.run(event.sessionId, event.seq, event.type, runIdOf(event), event.at, JSON.stringify(event));
  }
  const sessions = new Map<string, SessionRecord>();
  for (const session of unit.sessions) {
    const before = stored.sessions.get(session.sessionId);
    if (!before || !sessionUpdates.write(before, session)) {
      statements.upsertSession.run(sessionParameters(session));
      statements.updateSessionListingColumns.run(sessionListingParameters(session));
    }
    sessions.set(session.sessionId, session);
  }
  for (const run of unit.runs) statements.upsertRun.run(...runRowValues(run));
  for (const interaction of unit.interactions) statements.upsertInteraction.run(interactionParameters(interaction));
  for (const blob of unit.blobs) {
    statements.insertBlob.run(blob.sha256, blob.mediaType, blob.bytes);
    statements.insertBlobReference.run(blob.sessionId, blob.sha256);
  }
  return { lastSeqs, sessions };
}

/** SQLite's LIMIT for a page size: nothing for zero or less, everything for an unbounded one. */
function rowLimit(limit: number): number {
  if (Number.isNaN(limit) || limit <= 0) return 0;
  return Number.isFinite(limit) ? Math.trunc(limit) : -1;
}

/** One page of sessions newest first, with the statement that fits the query (each uses an index). */
function selectSessionPage(statements: StoreStatements, { limit, before, state }: SessionPageQuery): SessionRecord[] {
  const pageSize = rowLimit(limit);
  if (pageSize === 0) return [];
  const parameters: Record<string, SQLInputValue> = { limit: pageSize };
  if (before) Object.assign(parameters, { createdAt: before.createdAt, sessionId: before.sessionId });
  if (state !== undefined) parameters['state'] = state;
  const statement =
    state === undefined
      ? before
        ? statements.selectSessionPageAfter
        : statements.selectSessionPage
      : before
        ? statements.selectSessionPageOfStateAfter
        : statements.selectSessionPageOfState;
  return statement.all(parameters).map(sessionFromRow);
}

function countSessionsByState(statements: StoreStatements): SessionCounts {
  const counts: SessionCounts = { idle: 0, running: 0, waiting: 0, closed: 0 };
  for (const row of statements.countSessionsByState.all()) {
    const state = String(row['state']);
    if (state in counts) counts[state as keyof SessionCounts] = Number(row['count']);
  }
  return counts;
}

/** The port over an open, migrated database that this process holds the lock for. */
export function createSqliteStore(parts: SqliteStoreParts): SqliteStore {
  const { database, lock } = parts;
  const statements = prepareStatements(database);
  const sessionUpdates = new SessionUpdates(database);
  const storedSeqs: StoredSeqs = new Map();
  const storedSessions: StoredSessions = new Map();
  const idleCheckpoint = new IdleCheckpoint(database);
  let closed = false;

  // The work is synchronous, so calls run in the order they were made, concurrent or not.
  async function use<Result>(action: string, work: () => Result): Promise<Result> {
    if (closed) throw storeFailure('The store is closed. Create a new runtime to continue.', 'store_closed');
    return guardStore(action, work);
  }

  return {
    kind: 'sqlite',
    dataDir: parts.dataDir,
    databasePath: parts.databasePath,
    loadSessions: () => use('read sessions', () => statements.selectSessions.all().map(sessionFromRow)),
    loadOpenSessions: () => use('read open sessions', () => statements.selectOpenSessions.all().map(sessionFromRow)),
    listSessionsInDirectory: (directory) =>
      use('read sessions', () => statements.selectSessionsInDirectory.all(directory).map(sessionFromRow)),
    listSessions: (query) => use('read sessions', () => selectSessionPage(statements, query)),
    countSessionsByState: () => use('count sessions', () => countSessionsByState(statements)),
    getSession: (sessionId) =>
      use('read a session', () => {
        const row = statements.selectSession.get(sessionId);
        return row && sessionFromRow(row);
      }),
    getRun: (runId) =>
      use('read a run', () => {
        const row = statements.selectRun.get(runId);
        return row && runFromRow(row);
      }),
    listRuns: (sessionId) => use('read runs', () => statements.selectRunsOfSession.all(sessionId).map(runFromRow)),
    findReceipt: (commandId) =>
      use('read a receipt', () => {
        const row = statements.selectReceipt.get(commandId);
        return row && receiptFromRow(row);
      }),
    listInteractions: (sessionId, options = {}) =>
      use('read interactions', () =>
        (options.openOnly ? statements.selectOpenInteractionsOfSession : statements.selectInteractionsOfSession)
          .all(sessionId)
          .map(interactionFromRow),
      ),
    getInteraction: (sessionId, interactionRef) =>
      use('read an interaction', () => {
        const row = statements.selectInteraction.get(sessionId, interactionRef);
        return row && interactionFromRow(row);
      }),
    readEvents: (sessionId, { afterSeq, limit }) =>
      use('read events', () => {
        const pageSize = rowLimit(limit);
        return pageSize === 0 ? [] : statements.selectEvents.all(sessionId, afterSeq, pageSize).map(eventFromRow);
      }),
    readBlob: (sessionId, sha256) =>
      use('read a blob', () => {
        const row = statements.selectBlob.get(sessionId, sha256);
        return row && blobFromRow(row);
      }),
    deleteSession: (sessionId) =>
      use('delete the session; nothing was deleted', () => {
        // What a deleted session held (its prompts, the model's answers) is overwritten with zeros, not
        // left readable in free pages of the file: only here, where the cost of it is paid once.
        database.exec('PRAGMA secure_delete = ON');
        try {
          inImmediateTransaction(database, () => {
            for (const statement of statements.deleteSessionRows) statement.run(sessionId);
          });
        } finally {
          database.exec('PRAGMA secure_delete = OFF');
        }
        storedSeqs.delete(sessionId);
        storedSessions.delete(sessionId);
        idleCheckpoint.committed();
      }),
    commit: (unit) =>
      use('write the change; nothing was written', () => {
        const written = inImmediateTransaction(database, () =>
          writeUnit(statements, sessionUpdates, { seqs: storedSeqs, sessions: storedSessions }, unit),
        );
        // Only what was committed: a unit rolled back leaves the known seqs and rows as they were.
        for (const [sessionId, seq] of written.lastSeqs) remember(storedSeqs, sessionId, seq);
        for (const [sessionId, session] of written.sessions) remember(storedSessions, sessionId, session);
        idleCheckpoint.committed();
      }),
    async close() {
      if (closed) return;
      closed = true;
      idleCheckpoint.close();
      try {
        guardStore('close the database', () => database.close());
      } finally {
        lock.release();
      }
    },
  };
}
