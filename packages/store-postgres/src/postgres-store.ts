import { AgentError } from '@tether/protocol';
import {
  type CommitUnit,
  runRowValues,
  type SessionCoordination,
  type SessionCounts,
  type SessionPageQuery,
  type SessionRecord,
  type StoreHealth,
  type StoredReceipt,
  type TetherStore,
  receiptExists,
} from '@tether/runtime';
import type { Pool, PoolClient } from 'pg';
import { advanceEventHeads, plannedAppends, type SessionAppend } from './append-check.js';
import { notifyAppends } from './append-notices.js';
import { commitOutcome } from './commit-outcome.js';
import { isCommitOutcomeUnknown, retryConnectionLoss } from './connection-retry.js';
import type { HeldLeases } from './held-leases.js';
import { checkLeases, sessionsTouched } from './lease-fence.js';
import { leaseStatements } from './lease-statements.js';
import {
  blobFromRow,
  eventColumnArrays,
  eventFromRow,
  interactionFromRow,
  interactionParameters,
  receiptFromRow,
  receiptParameters,
  runFromRow,
  sessionFromRow,
  sessionParameters,
} from './record-rows.js';
import { guardStore, sqlState, storeFailure } from './store-failure.js';
import { statements } from './store-statements.js';
import { inTransaction } from './transaction.js';
import type { WriteQueue } from './write-queue.js';

const uniqueViolation = '23505';

/** PostgreSQL's LIMIT for a page size: 0 for zero or less, null (no limit) for an unbounded one. */
function rowLimit(limit: number): number | null {
  if (Number.isNaN(limit) || limit <= 0) return 0;
  return Number.isFinite(limit) ? Math.trunc(limit) : null;
}

/** Sessions per upsert statement: far below PostgreSQL's 65,535 parameters, and few statement texts per connection. */
const sessionsPerUpsert = 64;

/**
 * The unit's sessions, each once (the last record of one given twice, at the place of its first),
 * in one statement per 64: one round trip for a commit's sessions, not one each.
 */
async function upsertSessions(client: PoolClient, sessions: readonly SessionRecord[]): Promise<void> {
  const latest = new Map<string, SessionRecord>();
  for (const session of sessions) latest.set(session.sessionId, session);
  const rows = [...latest.values()];
  for (let start = 0; start < rows.length; start += sessionsPerUpsert) {
    const batch = rows.slice(start, start + sessionsPerUpsert);
    // Named per row count, so a connection prepares each size once and reuses it for later commits.
    await client.query({
      name: `tether-upsert-sessions-${batch.length}`,
      text: statements.upsertSessions(batch.length),
      values: batch.flatMap(sessionParameters),
    });
  }
}

/**
 * The unit's receipts, written before the rest of it (after the lease check): each is stored once. One whose command id is already
 * stored refuses the whole unit (receipt_exists). Another runtime's transaction inserting the same
 * command id holds this insert until it ends: committed, this unit is refused; rolled back, it goes on.
 */
async function insertReceipts(client: PoolClient, receipts: readonly StoredReceipt[]): Promise<void> {
  for (const receipt of receipts) {
    const { rowCount } = await client.query({
      name: 'tether-insert-receipt',
      text: statements.insertReceipt,
      values: receiptParameters(receipt),
    });
    if (rowCount === 0) throw receiptExists();
  }
}

async function writeUnit(
  client: PoolClient,
  held: HeldLeases,
  unit: CommitUnit,
  appends: readonly SessionAppend[],
): Promise<Map<string, number>> {
  const holding = await checkLeases(client, held, sessionsTouched(unit));
  await insertReceipts(client, unit.receipts);
  await advanceEventHeads(client, appends);
  await notifyAppends(client, appends);
  if (unit.events.length > 0) {
    try {
      await client.query({
        name: 'tether-insert-events',
        text: statements.insertEvents,
        values: eventColumnArrays(unit.events),
      });
    } catch (error) {
      // The heads already guard the sequence; the key is the backstop should a row exist without its head.
      if (sqlState(error) !== uniqueViolation) throw error;
      throw storeFailure(
        'Refused to store an event whose seq is already stored; nothing was written.',
        'sequence_conflict',
        error,
      );
    }
  }
  await upsertSessions(client, unit.sessions);
  // Named, so each connection prepares a statement once and reuses it for every later commit.
  const upserts: [name: string, text: string, rows: unknown[][]][] = [
    ['tether-upsert-run', statements.upsertRun, unit.runs.map(runRowValues)],
    ['tether-upsert-interaction', statements.upsertInteraction, unit.interactions.map(interactionParameters)],
  ];
  for (const [name, text, rows] of upserts) {
    for (const values of rows) await client.query({ name, text, values });
  }
  for (const blob of unit.blobs) {
    await client.query(statements.insertBlob, [blob.sha256, blob.mediaType, Buffer.from(blob.bytes)]);
    await client.query(statements.insertBlobReference, [blob.sessionId, blob.sha256]);
  }
  return holding;
}

async function deleteSessionRows(
  client: PoolClient,
  held: HeldLeases,
  sessionId: string,
): Promise<Map<string, number>> {
  await checkLeases(client, held, [sessionId]);
  // Forgotten before the lease row goes, so the heartbeat never takes the deletion for a loss.
  held.forget([sessionId]);
  for (const statement of statements.deleteSessionRows) await client.query(statement, [sessionId]);
  await client.query(leaseStatements.deleteLease, [sessionId]);
  return new Map();
}

async function countSessionsByState(pool: Pool): Promise<SessionCounts> {
  const counts: SessionCounts = { idle: 0, running: 0, waiting: 0, closed: 0 };
  const { rows } = await pool.query<{ state: string; count: string }>(statements.countSessionsByState);
  for (const row of rows) {
    if (row.state in counts) counts[row.state as keyof SessionCounts] = Number(row.count);
  }
  return counts;
}

async function selectSessionPage(pool: Pool, { limit, before, state }: SessionPageQuery): Promise<SessionRecord[]> {
  const pageSize = rowLimit(limit);
  if (pageSize === 0) return [];
  const values: unknown[] = [pageSize];
  if (before) values.push(before.createdAt, before.sessionId);
  if (state !== undefined) values.push(state);
  const text = statements.selectSessionPage({ after: before !== undefined, ofState: state !== undefined });
  const { rows } = await pool.query(text, values);
  return rows.map(sessionFromRow);
}

/** What the store is built from: the pool, its write queue, its leases and how it shares the database. */
export interface PostgresStoreParts {
  readonly pool: Pool;
  readonly writes: WriteQueue;
  readonly held: HeldLeases;
  readonly coordination: SessionCoordination;
  /** Whether the server is reachable, as the heartbeat last found (connection-health.ts). */
  readonly health: () => StoreHealth;
  /** Ends the coordination (heartbeat, listener, this runtime's leases) once the writes have drained, before the pool ends. */
  readonly closeCoordination: () => Promise<void>;
  /** Cuts every connection to the server, pooled or the listener's, without a word to it (abandon). */
  readonly cutConnections: () => void;
}

/**
 * The port over a migrated database, through a pool. Writes (commit, deleteSession) go one at a time
 * in the order they were called (the write queue), each in its own transaction, checking in it that
 * this store holds the lease of every session it writes (lease-fence.ts). A read waits for the
 * writes called before it, so it sees them, as with the other stores; reads run side by side.
 */
export function createPostgresStore({
  pool,
  writes,
  held,
  coordination,
  health,
  closeCoordination,
  cutConnections,
}: PostgresStoreParts): TetherStore {
  let closed = false;
  let abandoned = false;
  let poolEnded: Promise<void> | undefined;
  const endPool = () => {
    poolEnded ??= pool.end();
    return poolEnded;
  };

  function abandonedFailure(): AgentError {
    return storeFailure(
      'The store stopped waiting for the PostgreSQL server (a forced stop): what this was storing may or may not be stored. The next runtime on this database ends the runs left open.',
      'store_abandoned',
    );
  }

  function refuseWhenClosed(): void {
    if (abandoned) throw abandonedFailure();
    if (closed) throw storeFailure('The store is closed. Create a new runtime to continue.', 'store_closed');
  }

  /** Once abandoned, every failure is that: the connection was cut here, not lost. */
  async function unlessAbandoned<Result>(work: () => Promise<Result>): Promise<Result> {
    try {
      return await work();
    } catch (error) {
      throw abandoned ? abandonedFailure() : error;
    }
  }

  async function read<Result>(action: string, work: () => Promise<Result>): Promise<Result> {
    refuseWhenClosed();
    await writes.drained();
    return unlessAbandoned(() => guardStore(action, () => retryConnectionLoss(action, work)));
  }

  /**
   * One transaction, run again after a connection loss (it surely rolled back). A lost answer to
   * COMMIT is settled by reading the heads, or the receipts of a unit that appends nothing
   * (commit-outcome.ts): stored, it succeeded; not stored, it runs again; neither,
   * commit_outcome_unknown stands.
   */
  function transact(
    action: string,
    work: (client: PoolClient) => Promise<Map<string, number>>,
    appends: readonly SessionAppend[],
    receipts: readonly StoredReceipt[],
  ): Promise<Map<string, number>> {
    return retryConnectionLoss(action, async () => {
      let produced = new Map<string, number>();
      try {
        return await inTransaction(pool, async (client) => {
          produced = await work(client);
          return produced;
        });
      } catch (error) {
        if (!isCommitOutcomeUnknown(error)) throw error;
        const fence = { ownerId: held.ownerId, tokens: produced };
        const outcome = await retryConnectionLoss(action, () => commitOutcome(pool, appends, receipts, fence));
        if (outcome === 'committed') return produced;
        throw outcome === 'not_committed' ? error.cause : error;
      }
    });
  }

  async function write(
    action: string,
    work: (client: PoolClient) => Promise<Map<string, number>>,
    appends: readonly SessionAppend[] = [],
    receipts: readonly StoredReceipt[] = [],
  ): Promise<void> {
    refuseWhenClosed();
    try {
      const holding = await unlessAbandoned(() =>
        writes.run(() => guardStore(action, () => transact(action, work, appends, receipts))),
      );
      for (const [sessionId, token] of holding) held.hold(sessionId, token);
    } catch (error) {
      // Sessions another runtime took are no longer this store's: none of their writes can pass again.
      if (AgentError.isInstance(error) && error.details?.['reason'] === 'lease_lost')
        held.forget(error.details.sessionIds ?? []);
      throw error;
    }
  }

  async function one<Row>(text: string, values: unknown[], fromRow: (row: unknown) => Row): Promise<Row | undefined> {
    const { rows } = await pool.query(text, values);
    return rows[0] === undefined ? undefined : fromRow(rows[0]);
  }

  async function all<Row>(text: string, values: unknown[], fromRow: (row: unknown) => Row): Promise<Row[]> {
    const { rows } = await pool.query(text, values);
    return rows.map(fromRow);
  }

  return {
    kind: 'postgres',
    coordination,
    health,
    loadSessions: () => read('read sessions', () => all(statements.selectSessions, [], sessionFromRow)),
    loadOpenSessions: () => read('read open sessions', () => all(statements.selectOpenSessions, [], sessionFromRow)),
    listSessionsInDirectory: (directory) =>
      read('read sessions', () => all(statements.selectSessionsInDirectory, [directory], sessionFromRow)),
    listSessions: (query) => read('read sessions', () => selectSessionPage(pool, query)),
    countSessionsByState: () => read('count sessions', () => countSessionsByState(pool)),
    getSession: (sessionId) => read('read a session', () => one(statements.selectSession, [sessionId], sessionFromRow)),
    getRun: (runId) => read('read a run', () => one(statements.selectRun, [runId], runFromRow)),
    listRuns: (sessionId) => read('read runs', () => all(statements.selectRunsOfSession, [sessionId], runFromRow)),
    findReceipt: (commandId) =>
      read('read a receipt', () => one(statements.selectReceipt, [commandId], receiptFromRow)),
    listInteractions: (sessionId, options = {}) =>
      read('read interactions', () =>
        all(
          options.openOnly ? statements.selectOpenInteractionsOfSession : statements.selectInteractionsOfSession,
          [sessionId],
          interactionFromRow,
        ),
      ),
    getInteraction: (sessionId, interactionRef) =>
      read('read an interaction', () =>
        one(statements.selectInteraction, [sessionId, interactionRef], interactionFromRow),
      ),
    readEvents: (sessionId, { afterSeq, limit }) =>
      read('read events', async () => {
        const pageSize = rowLimit(limit);
        if (pageSize === 0) return [];
        const { rows } = await pool.query({
          name: 'tether-select-events',
          text: statements.selectEvents,
          values: [sessionId, afterSeq, pageSize],
        });
        return rows.map(eventFromRow);
      }),
    readBlob: (sessionId, sha256) =>
      read('read a blob', () => one(statements.selectBlob, [sessionId, sha256], blobFromRow)),
    deleteSession: async (sessionId) => {
      await write('delete the session; nothing was deleted', (client) => deleteSessionRows(client, held, sessionId));
      // Forgotten again once the lease row is gone: a claim that ended while the deletion ran held
      // the lease the deletion removed, and the heartbeat would report the session lost.
      held.forget([sessionId]);
    },
    commit: async (unit) => {
      refuseWhenClosed();
      // Refused before anything is sent when the unit itself skips or repeats a seq.
      const appends = plannedAppends(unit.events);
      await write(
        'write the change; nothing was written',
        (client) => writeUnit(client, held, unit, appends),
        appends,
        unit.receipts,
      );
    },
    abandon() {
      if (abandoned) return;
      abandoned = true;
      // From here nothing waits for the server: a new connection is refused, those in use are cut
      // (their statements fail), and close() ends without the leases' release (they lapse).
      endPool().catch(() => undefined);
      cutConnections();
    },
    async close() {
      if (closed) return;
      closed = true;
      await writes.drained();
      await closeCoordination();
      await guardStore('close the connection pool', endPool);
    },
  };
}
