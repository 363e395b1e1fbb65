import type { Migration } from './migration.js';

// permission_mode is nullable so sessions written before it existed read back as "not yet known".
// An interaction belongs to its session: the key is the pair, so a reference looked up under
// another session finds nothing. `position` records first insertion per session (an upsert keeps
// it); it breaks ties between equal requested_at values, and unlike rowid it survives VACUUM.
export const interactionsMigration: Migration = {
  version: 2,
  name: 'interactions',
  sql: `
    ALTER TABLE sessions ADD COLUMN permission_mode TEXT;

    CREATE TABLE interactions (
      session_id TEXT NOT NULL,
      interaction_ref TEXT NOT NULL,
      position INTEGER NOT NULL,
      run_id TEXT NOT NULL,
      status TEXT NOT NULL,
      request TEXT NOT NULL,
      requested_at TEXT NOT NULL,
      settled_at TEXT,
      PRIMARY KEY (session_id, interaction_ref)
    ) STRICT;
    -- The runtime asks for a session's open interactions on every snapshot and after a restart.
    CREATE INDEX open_interactions_by_session ON interactions (session_id, requested_at, position)
      WHERE status IN ('pending', 'resolving');
  `,
};
