import type { DatabaseSync } from 'node:sqlite';
import { RunStartedEvent, housekeepingEventTypes, turnTitle } from '@tether/protocol';
import type { Migration } from './migration.js';

/** The title a stored run.started event gives, as the runtime computes it; null for one it cannot read. */
function titleOfStoredEvent(data: string): string | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch {
    return null; // A damaged event titles nothing; reading it later reports it.
  }
  const started = RunStartedEvent.safeParse(parsed);
  return started.success ? turnTitle(started.data) : null;
}

/** Each session's title from its first run.started that gives one (controls and redacted turns do not). */
function backfillTitles(database: DatabaseSync): void {
  const titles = new Map<string, string>();
  const started = database.prepare(
    `SELECT session_id, data FROM events WHERE type = 'run.started' ORDER BY session_id, seq`,
  );
  for (const row of started.iterate()) {
    const sessionId = String(row['session_id']);
    if (titles.has(sessionId)) continue;
    const title = titleOfStoredEvent(String(row['data']));
    if (title !== null) titles.set(sessionId, title);
  }
  const setTitle = database.prepare('UPDATE sessions SET title = ? WHERE session_id = ?');
  for (const [sessionId, title] of titles) setTitle.run(title, sessionId);
}

/**
 * The fields the session list needs, kept on the session row so listing sessions reads no events.
 * All nullable: a row the runtime has not written since reads back as untitled, with no last run.
 * Existing sessions are filled from what the database holds, in the migration's transaction: the
 * title from the events, the last run from the runs table (latest completion; later start, then
 * later insertion, breaks a tie within a millisecond), the last activity from the newest event
 * that is not housekeeping (the session's creation when there is none).
 */
export const sessionSummaryMigration: Migration = {
  version: 4,
  name: 'session-summary',
  sql: `
    ALTER TABLE sessions ADD COLUMN title TEXT;
    ALTER TABLE sessions ADD COLUMN last_run_id TEXT;
    ALTER TABLE sessions ADD COLUMN last_run_outcome TEXT;
    ALTER TABLE sessions ADD COLUMN last_run_completed_at TEXT;
    ALTER TABLE sessions ADD COLUMN last_activity_at TEXT;
  `,
  backfill(database) {
    backfillTitles(database);
    database.exec(`
      UPDATE sessions SET (last_run_id, last_run_outcome, last_run_completed_at) = (
        SELECT run_id, outcome, completed_at FROM runs
        WHERE runs.session_id = sessions.session_id AND status = 'completed' AND outcome IS NOT NULL AND completed_at IS NOT NULL
        ORDER BY completed_at DESC, started_at DESC, rowid DESC LIMIT 1)`);
    database
      .prepare(
        `UPDATE sessions SET last_activity_at = coalesce(
          (SELECT at FROM events
           WHERE events.session_id = sessions.session_id AND type NOT IN (SELECT value FROM json_each($housekeeping))
           ORDER BY seq DESC LIMIT 1),
          created_at)`,
      )
      .run({ housekeeping: JSON.stringify(housekeepingEventTypes) });
  },
};
