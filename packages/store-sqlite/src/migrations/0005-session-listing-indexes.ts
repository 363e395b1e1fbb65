import type { Migration } from './migration.js';

// The runtime no longer holds every session in memory: start-up loads only what is open, and the
// session list and its counts are read page by page from here. Without these, each of those reads
// scans the whole sessions table, which only ever grows.
export const sessionListingIndexesMigration: Migration = {
  version: 5,
  name: 'session-listing-indexes',
  sql: `
    -- Pages newest first (createdAt, then id), all states.
    CREATE INDEX sessions_newest_first ON sessions (created_at, session_id);
    -- Pages of one state, and the count of each state without reading rows.
    CREATE INDEX sessions_by_state_newest_first ON sessions (state, created_at, session_id);
    -- What start-up loads: the open sessions, and closed ones whose process a crash may have left.
    CREATE INDEX sessions_loaded_at_start ON sessions (session_id) WHERE state <> 'closed' OR live_process IS NOT NULL;
  `,
};
