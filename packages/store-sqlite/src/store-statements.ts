import type { DatabaseSync, StatementSync } from 'node:sqlite';
import { runRowColumns } from '@tether/runtime';

export interface StoreStatements {
  readonly lastSeq: StatementSync;
  readonly insertEvent: StatementSync;
  readonly upsertSession: StatementSync;
  readonly updateSessionListingColumns: StatementSync;
  readonly upsertRun: StatementSync;
  readonly upsertInteraction: StatementSync;
  readonly insertReceipt: StatementSync;
  readonly selectSessions: StatementSync;
  readonly selectOpenSessions: StatementSync;
  readonly selectSessionsInDirectory: StatementSync;
  readonly selectSessionPage: StatementSync;
  readonly selectSessionPageAfter: StatementSync;
  readonly selectSessionPageOfState: StatementSync;
  readonly selectSessionPageOfStateAfter: StatementSync;
  readonly countSessionsByState: StatementSync;
  readonly selectSession: StatementSync;
  readonly selectRun: StatementSync;
  readonly selectRunsOfSession: StatementSync;
  readonly selectInteractionsOfSession: StatementSync;
  readonly selectOpenInteractionsOfSession: StatementSync;
  readonly selectInteraction: StatementSync;
  readonly selectReceipt: StatementSync;
  readonly selectEvents: StatementSync;
  readonly insertBlob: StatementSync;
  readonly insertBlobReference: StatementSync;
  readonly selectBlob: StatementSync;
  readonly deleteSessionRows: readonly StatementSync[];
}

const sessionColumns =
  'session_id, provider, workspace, configuration, ephemeral, redact_input, state, active_run_id, permission_mode, model, live_process, provider_session_id, usage, title, last_run_id, last_run_outcome, last_run_completed_at, last_seq, created_at, updated_at, last_activity_at, forked_from, copy_conversation, workspace_status, queued_inputs, limits, context_usage';
const runColumns = runRowColumns.join(', ');
const interactionColumns = 'session_id, interaction_ref, run_id, status, request, requested_at, settled_at';

/** Prepared once per open store and reused: commit is on the hot path of every streamed event. */
export function prepareStatements(database: DatabaseSync): StoreStatements {
  return {
    lastSeq: database.prepare('SELECT coalesce(max(seq), 0) AS last_seq FROM events WHERE session_id = ?'),
    // The session's blobs no other session refers to go first, while its references still name them.
    deleteSessionRows: [
      database.prepare(`
        DELETE FROM blobs WHERE sha256 IN (SELECT sha256 FROM blob_references WHERE session_id = ?1)
          AND NOT EXISTS (SELECT 1 FROM blob_references AS other WHERE other.sha256 = blobs.sha256 AND other.session_id <> ?1)`),
      ...['blob_references', 'events', 'interactions', 'runs', 'sessions'].map((table) =>
        database.prepare(`DELETE FROM ${table} WHERE session_id = ?`),
      ),
    ],
    // Content-addressed: the same bytes are stored once, whoever commits them again.
    insertBlob: database.prepare(
      'INSERT INTO blobs (sha256, media_type, bytes) VALUES (?, ?, ?) ON CONFLICT DO NOTHING',
    ),
    insertBlobReference: database.prepare(
      'INSERT INTO blob_references (session_id, sha256) VALUES (?, ?) ON CONFLICT DO NOTHING',
    ),
    selectBlob: database.prepare(`
      SELECT blobs.media_type, blobs.bytes FROM blob_references JOIN blobs USING (sha256)
      WHERE blob_references.session_id = ? AND blob_references.sha256 = ?`),
    insertEvent: database.prepare(
      'INSERT INTO events (session_id, seq, type, run_id, at, data) VALUES (?, ?, ?, ?, ?, ?)',
    ),
    // The listing indexes (migration 5) cover state, live_process and created_at. SQLite rewrites an
    // index for every column an UPDATE names, changed or not, so the commit-per-event upsert leaves
    // them out (created_at never changes) and the statement below writes state and live_process only
    // when they differ: a streamed turn then costs no index writes (a third of single-event commit
    // throughput otherwise, measured).
    upsertSession: database.prepare(`
      INSERT INTO sessions (${sessionColumns})
      VALUES ($sessionId, $provider, $workspace, $configuration, $ephemeral, $redactInput, $state, $activeRunId, $permissionMode, $model, $liveProcess, $providerSessionId, $usage,
        $title, $lastRunId, $lastRunOutcome, $lastRunCompletedAt, $lastSeq, $createdAt, $updatedAt, $lastActivityAt, $forkedFrom, $copyConversation, $workspaceStatus,
        $queuedInputs, $limits, $contextUsage)
      ON CONFLICT (session_id) DO UPDATE SET
        provider = excluded.provider, workspace = excluded.workspace, configuration = excluded.configuration,
        ephemeral = excluded.ephemeral, redact_input = excluded.redact_input,
        active_run_id = excluded.active_run_id, permission_mode = excluded.permission_mode, model = excluded.model, provider_session_id = excluded.provider_session_id,
        usage = excluded.usage, title = excluded.title, last_run_id = excluded.last_run_id, last_run_outcome = excluded.last_run_outcome,
        last_run_completed_at = excluded.last_run_completed_at, last_seq = excluded.last_seq,
        updated_at = excluded.updated_at, last_activity_at = excluded.last_activity_at,
        forked_from = excluded.forked_from, copy_conversation = excluded.copy_conversation,
        workspace_status = excluded.workspace_status, queued_inputs = excluded.queued_inputs,
        limits = excluded.limits, context_usage = excluded.context_usage`),
    updateSessionListingColumns: database.prepare(`
      UPDATE sessions SET state = $state, live_process = $liveProcess
      WHERE session_id = $sessionId AND (state IS NOT $state OR live_process IS NOT $liveProcess)`),
    // A run's session and start are set once (run.started) and never change; naming them here rewrote
    // the runs_by_session index at every run's end, on the way to publishing it.
    upsertRun: database.prepare(`
      INSERT INTO runs (${runColumns})
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
      ON CONFLICT (run_id) DO UPDATE SET
        status = excluded.status, outcome = excluded.outcome, error = excluded.error,
        usage = excluded.usage, completed_at = excluded.completed_at,
        checkpoint = excluded.checkpoint`),
    // position is taken on first insertion only, so an upsert keeps the interaction's place in request order.
    upsertInteraction: database.prepare(`
      INSERT INTO interactions (${interactionColumns}, position)
      VALUES ($sessionId, $interactionRef, $runId, $status, $request, $requestedAt, $settledAt,
        (SELECT coalesce(max(position), 0) + 1 FROM interactions WHERE session_id = $sessionId))
      ON CONFLICT (session_id, interaction_ref) DO UPDATE SET
        run_id = excluded.run_id, status = excluded.status, request = excluded.request,
        requested_at = excluded.requested_at, settled_at = excluded.settled_at`),
    // Written once: a command id already stored changes nothing (no row counted), and the commit is refused.
    insertReceipt: database.prepare(`
      INSERT INTO receipts (command_id, fingerprint, receipt, at) VALUES (?, ?, ?, ?)
      ON CONFLICT (command_id) DO NOTHING`),
    // rowid order is first-insertion order (an upsert keeps the row): the order the in-memory store gives.
    selectSessions: database.prepare(`SELECT ${sessionColumns} FROM sessions ORDER BY rowid`),
    // Asked at each close and delete of a worktree session: a scan of the table (json_extract per row,
    // no row decoded), a few ms for thousands of sessions, which is what an index would save.
    selectSessionsInDirectory: database.prepare(
      `SELECT ${sessionColumns} FROM sessions WHERE json_extract(workspace_status, '$.directory') = ? ORDER BY rowid`,
    ),
    // What start-up loads: the open sessions (two ranges of the index by state, so any state but
    // closed), and the closed ones whose process a crash may have left (the partial index on
    // live_process). Named, because to skip the sort SQLite would rather read every session in id order.
    selectOpenSessions: database.prepare(`
      SELECT ${sessionColumns} FROM sessions INDEXED BY sessions_by_state_newest_first WHERE state < 'closed' OR state > 'closed'
      UNION ALL
      SELECT ${sessionColumns} FROM sessions INDEXED BY sessions_with_live_process WHERE live_process IS NOT NULL AND state = 'closed'
      ORDER BY session_id`),
    // Newest first; a row value compares (created_at, session_id) as the cursor orders them, through the index.
    selectSessionPage: database.prepare(
      `SELECT ${sessionColumns} FROM sessions ORDER BY created_at DESC, session_id DESC LIMIT $limit`,
    ),
    selectSessionPageAfter: database.prepare(`
      SELECT ${sessionColumns} FROM sessions WHERE (created_at, session_id) < ($createdAt, $sessionId)
      ORDER BY created_at DESC, session_id DESC LIMIT $limit`),
    selectSessionPageOfState: database.prepare(
      `SELECT ${sessionColumns} FROM sessions WHERE state = $state ORDER BY created_at DESC, session_id DESC LIMIT $limit`,
    ),
    selectSessionPageOfStateAfter: database.prepare(`
      SELECT ${sessionColumns} FROM sessions WHERE state = $state AND (created_at, session_id) < ($createdAt, $sessionId)
      ORDER BY created_at DESC, session_id DESC LIMIT $limit`),
    countSessionsByState: database.prepare('SELECT state, count(*) AS count FROM sessions GROUP BY state'),
    selectSession: database.prepare(`SELECT ${sessionColumns} FROM sessions WHERE session_id = ?`),
    selectRun: database.prepare(`SELECT ${runColumns} FROM runs WHERE run_id = ?`),
    selectRunsOfSession: database.prepare(
      `SELECT ${runColumns} FROM runs WHERE session_id = ? ORDER BY started_at, rowid`,
    ),
    selectInteractionsOfSession: database.prepare(
      `SELECT ${interactionColumns} FROM interactions WHERE session_id = ? ORDER BY requested_at, position`,
    ),
    // The status condition is written exactly as in the partial index's WHERE, so SQLite uses that index.
    selectOpenInteractionsOfSession: database.prepare(`
      SELECT ${interactionColumns} FROM interactions
      WHERE session_id = ? AND status IN ('pending', 'resolving') ORDER BY requested_at, position`),
    selectInteraction: database.prepare(
      `SELECT ${interactionColumns} FROM interactions WHERE session_id = ? AND interaction_ref = ?`,
    ),
    selectReceipt: database.prepare('SELECT command_id, fingerprint, receipt, at FROM receipts WHERE command_id = ?'),
    selectEvents: database.prepare(
      'SELECT session_id, seq, data FROM events WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?',
    ),
  };
}
