import type { Migration } from './migration.js';

// The first commit after a checkpoint starts the write-ahead log again, and SQLite syncs the new
// log's header in that commit (synchronous = NORMAL): an fsync, ~0.4-0.5 ms on a 2-core virtual
// machine, paid by whichever commit comes after a rest, a turn's start after its user read the last
// answer or a new session's opening. The store writes this one row right after each checkpoint (and
// at open) instead, so that sync happens at rest (idle-checkpoint.ts). Nothing reads it.
export const logPrimerMigration: Migration = {
  version: 10,
  name: 'log-primer',
  sql: `
    CREATE TABLE log_primer (id INTEGER PRIMARY KEY CHECK (id = 1), primed INTEGER NOT NULL) STRICT;
    INSERT INTO log_primer (id, primed) VALUES (1, 0);
  `,
};
