import type { Migration } from './migration.js';

// A session's queued follow-ups (a JSON array, oldest first), its account's plan limits and its
// context usage, as nullable json: rows written before them read back as none.
export const sessionFollowUpsAndLimitsMigration: Migration = {
  version: 3,
  name: 'session follow-ups and limits',
  sql: `
    ALTER TABLE sessions ADD COLUMN queued_inputs json;
    ALTER TABLE sessions ADD COLUMN limits json;
    ALTER TABLE sessions ADD COLUMN context_usage json;
  `,
};
