import type { Migration } from './migration.js';

// JSON columns hold the port's records as the runtime gave them; the plain columns exist to be
// queried. No foreign keys between tables: the port does not promise that a session row is
// written before its runs or events, and the in-memory reference store does not require it.
export const initialMigration: Migration = {
  version: 1,
  name: 'initial',
  sql: `
    CREATE TABLE sessions (
      session_id TEXT PRIMARY KEY,
      provider TEXT NOT NULL,
      workspace TEXT NOT NULL,
      configuration TEXT NOT NULL,
      ephemeral INTEGER NOT NULL,
      redact_input INTEGER NOT NULL,
      state TEXT NOT NULL,
      active_run_id TEXT,
      provider_session_id TEXT,
      usage TEXT NOT NULL,
      last_seq INTEGER NOT NULL,
      created_at TEXT NOT NULL,
      updated_at TEXT NOT NULL
    ) STRICT;

    CREATE TABLE runs (
      run_id TEXT PRIMARY KEY,
      session_id TEXT NOT NULL,
      status TEXT NOT NULL,
      outcome TEXT,
      error TEXT,
      usage TEXT,
      started_at TEXT NOT NULL,
      completed_at TEXT
    ) STRICT;
    CREATE INDEX runs_by_session ON runs (session_id, started_at);

    CREATE TABLE events (
      global_position INTEGER PRIMARY KEY AUTOINCREMENT,
      session_id TEXT NOT NULL,
      seq INTEGER NOT NULL,
      type TEXT NOT NULL,
      run_id TEXT,
      at TEXT NOT NULL,
      data TEXT NOT NULL,
      UNIQUE (session_id, seq)
    ) STRICT;

    CREATE TABLE receipts (
      command_id TEXT PRIMARY KEY,
      fingerprint TEXT NOT NULL,
      receipt TEXT NOT NULL,
      at TEXT NOT NULL
    ) STRICT;
  `,
};
