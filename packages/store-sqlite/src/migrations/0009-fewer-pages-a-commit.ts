import type { Migration } from './migration.js';

// Each page a commit changes is two writes to the write-ahead log (a frame header, then the page),
// ~5-7 µs on a 2-core virtual machine, paid before the commit's events are published. Three
// changes take five pages off a short turn's commits (docs/benchmarks.md, "Fewer pages a commit"):
// - events lose AUTOINCREMENT, which updated sqlite_sequence in every commit that held an event.
//   Nothing reads global_position; it stays as the rowid, now max + 1 (reusable after a delete).
// - receipts are keyed by command id alone (WITHOUT ROWID): one b-tree to write, not a table and
//   its primary key index.
// - the open sessions are found through the listing index by state, and closed sessions whose process
//   may have outlived a crash through an index on live_process alone: the index this replaces named
//   state in its WHERE, so every idle ↔ running change rewrote it, at each run's start and end.
// Rows are copied in their order (events by rowid, so global_position keeps its values).
export const fewerPagesACommitMigration: Migration = {
  version: 9,
  name: 'fewer-pages-a-commit',
  sql: `
    CREATE TABLE events_rebuilt (
      global_position INTEGER PRIMARY KEY,
      session_id TEXT NOT NULL,
      seq INTEGER NOT NULL,
      type TEXT NOT NULL,
      run_id TEXT,
      at TEXT NOT NULL,
      data TEXT NOT NULL,
      UNIQUE (session_id, seq)
    ) STRICT;
    INSERT INTO events_rebuilt (global_position, session_id, seq, type, run_id, at, data)
      SELECT global_position, session_id, seq, type, run_id, at, data FROM events ORDER BY global_position;
    DROP TABLE events;
    ALTER TABLE events_rebuilt RENAME TO events;

    CREATE TABLE receipts_rebuilt (
      command_id TEXT PRIMARY KEY,
      fingerprint TEXT NOT NULL,
      receipt TEXT NOT NULL,
      at TEXT NOT NULL
    ) STRICT, WITHOUT ROWID;
    INSERT INTO receipts_rebuilt (command_id, fingerprint, receipt, at)
      SELECT command_id, fingerprint, receipt, at FROM receipts;
    DROP TABLE receipts;
    ALTER TABLE receipts_rebuilt RENAME TO receipts;

    DROP INDEX sessions_loaded_at_start;
    CREATE INDEX sessions_with_live_process ON sessions (session_id) WHERE live_process IS NOT NULL;
  `,
};
