import type { Migration } from './migration.js';

// A session's queued follow-ups (a JSON array, oldest first), its account's plan limits and its
// context usage (JSON objects), as nullable JSON: rows written before them read back as none.
export const sessionFollowUpsAndLimitsMigration: Migration = {
  version: 8,
  name: 'session-follow-ups-and-limits',
  sql: `
    ALTER TABLE sessions ADD COLUMN queued_inputs TEXT;
    ALTER TABLE sessions ADD COLUMN limits TEXT;
    ALTER TABLE sessions ADD COLUMN context_usage TEXT;
  `,
};
