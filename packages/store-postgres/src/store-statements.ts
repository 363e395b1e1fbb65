import { runRowColumns as runColumns } from '@tether/runtime';
import { interactionColumns, sessionColumns } from './record-rows.js';

/** `($1, …, $n)` for each of `rows` rows of `columns` parameters, numbered on from row to row. */
function placeholders(columns: number, rows = 1): string {
  return Array.from(
    { length: rows },
    (_, row) => `(${Array.from({ length: columns }, (_, column) => `$${row * columns + column + 1}`).join(', ')})`,
  ).join(', ');
}

/**
 * `INSERT … ON CONFLICT (key) DO UPDATE` every column but the key, for `rows` rows at once: a record
 * committed again replaces the row, keeping its position. Each parameter takes its column's type.
 */
function upsert(table: string, columns: readonly string[], key: readonly string[], rows = 1): string {
  const updated = columns.filter((column) => !key.includes(column));
  return `INSERT INTO ${table} (${columns.join(', ')}) VALUES ${placeholders(columns.length, rows)}
    ON CONFLICT (${key.join(', ')}) DO UPDATE SET ${updated.map((column) => `${column} = excluded.${column}`).join(', ')}`;
}

const sessionList = sessionColumns.join(', ');
const runList = runColumns.join(', ');
const interactionList = interactionColumns.join(', ');

/** The store's SQL. Text that orders (ids, timestamps) is COLLATE "C" in the schema, so ORDER BY compares code units as SQLite does. */
export const statements = {
  /** All of a unit's sessions in one statement (each session once: a row may not be updated twice in one). */
  upsertSessions: (rows: number) => upsert('sessions', sessionColumns, ['session_id'], rows),
  upsertRun: upsert('runs', runColumns, ['run_id']),
  upsertInteraction: upsert('interactions', interactionColumns, ['session_id', 'interaction_ref']),
  // Written once, never replaced: a command id already stored (or committed meanwhile by another
  // runtime's transaction, which this one waits for) inserts nothing, and the commit is refused.
  insertReceipt: `INSERT INTO receipts (command_id, fingerprint, receipt, at) VALUES ($1, $2, $3, $4)
    ON CONFLICT (command_id) DO NOTHING`,
  selectReceipts: 'SELECT command_id, fingerprint, receipt, at FROM receipts WHERE command_id = ANY($1::text[])',
  // One statement for all of a unit's events, whatever their number.
  insertEvents: `INSERT INTO events (session_id, seq, type, run_id, at, data)
    SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::json[])`,
  // Content-addressed: the same bytes are stored once, whoever commits them again.
  insertBlob: 'INSERT INTO blobs (sha256, media_type, bytes) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING',
  insertBlobReference: 'INSERT INTO blob_references (session_id, sha256) VALUES ($1, $2) ON CONFLICT DO NOTHING',
  // The session's blobs no other session refers to go first, while its references still name them.
  deleteSessionRows: [
    `DELETE FROM blobs WHERE sha256 IN (SELECT sha256 FROM blob_references WHERE session_id = $1)
      AND NOT EXISTS (SELECT 1 FROM blob_references AS other WHERE other.sha256 = blobs.sha256 AND other.session_id <> $1)`,
    ...['blob_references', 'event_heads', 'events', 'interactions', 'runs', 'sessions'].map(
      (table) => `DELETE FROM ${table} WHERE session_id = $1`,
    ),
  ],
  selectSessions: `SELECT ${sessionList} FROM sessions ORDER BY position`,
  selectOpenSessions: `SELECT ${sessionList} FROM sessions WHERE state <> 'closed' OR live_process IS NOT NULL ORDER BY session_id`,
  // Asked at each close and delete of a worktree session: a scan of the table (the json parsed per row),
  // a few ms for thousands of sessions, which is what an index would save.
  selectSessionsInDirectory: `SELECT ${sessionList} FROM sessions WHERE workspace_status->>'directory' = $1 ORDER BY position`,
  // Newest first; a row value compares (created_at, session_id) as the cursor orders them. One text per
  // shape of query, so each is planned on its own index: $1 is the limit (NULL: none), then the
  // position the page starts after (createdAt, sessionId) if given, then the state if given.
  selectSessionPage({ after, ofState }: { after: boolean; ofState: boolean }): string {
    const conditions = [
      ...(after ? ['(created_at, session_id) < ($2, $3)'] : []),
      ...(ofState ? [`state = $${after ? 4 : 2}`] : []),
    ];
    return `SELECT ${sessionList} FROM sessions ${conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : ''}
      ORDER BY created_at DESC, session_id DESC LIMIT $1`;
  },
  countSessionsByState: 'SELECT state, count(*) AS count FROM sessions GROUP BY state',
  selectSession: `SELECT ${sessionList} FROM sessions WHERE session_id = $1`,
  selectRun: `SELECT ${runList} FROM runs WHERE run_id = $1`,
  selectRunsOfSession: `SELECT ${runList} FROM runs WHERE session_id = $1 ORDER BY started_at, position`,
  selectInteractionsOfSession: `SELECT ${interactionList} FROM interactions WHERE session_id = $1 ORDER BY requested_at, position`,
  selectOpenInteractionsOfSession: `SELECT ${interactionList} FROM interactions
    WHERE session_id = $1 AND status IN ('pending', 'resolving') ORDER BY requested_at, position`,
  selectInteraction: `SELECT ${interactionList} FROM interactions WHERE session_id = $1 AND interaction_ref = $2`,
  selectReceipt: 'SELECT command_id, fingerprint, receipt, at FROM receipts WHERE command_id = $1',
  selectEvents: 'SELECT session_id, seq, data FROM events WHERE session_id = $1 AND seq > $2 ORDER BY seq LIMIT $3',
  selectBlob: `SELECT blobs.media_type, blobs.bytes FROM blob_references JOIN blobs USING (sha256)
    WHERE blob_references.session_id = $1 AND blob_references.sha256 = $2`,
} as const;
