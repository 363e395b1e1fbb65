import type { Migration } from './migration.js';

// Images a turn carried, by content (sha256): stored once however many sessions (forks, repeated
// pastes) refer to them, and kept while one does. A reference belongs to a session, so a session
// reads only the blobs its own events name. The new session and run columns are nullable JSON:
// rows written before them read back as "not a fork", "no pending copy" and "no checkpoint".
export const blobsForksAndCheckpointsMigration: Migration = {
  version: 6,
  name: 'blobs-forks-and-checkpoints',
  sql: `
    CREATE TABLE blobs (
      sha256 TEXT PRIMARY KEY,
      media_type TEXT NOT NULL,
      bytes BLOB NOT NULL
    ) STRICT;

    CREATE TABLE blob_references (
      session_id TEXT NOT NULL,
      sha256 TEXT NOT NULL,
      PRIMARY KEY (session_id, sha256)
    ) STRICT;
    -- Deleting a session asks, for each of its blobs, whether another session still refers to it.
    CREATE INDEX blob_references_by_blob ON blob_references (sha256);

    ALTER TABLE sessions ADD COLUMN forked_from TEXT;
    ALTER TABLE sessions ADD COLUMN copy_conversation TEXT;
    ALTER TABLE runs ADD COLUMN checkpoint TEXT;
  `,
};
