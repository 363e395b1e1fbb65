import type { Migration } from './migration.js';

// What the workspace acquirer made of a session's workspace (where the agent runs, the worktree and
// branch, kept or removed once released), as nullable JSON: rows written before it read back as
// null, "not tracked", and such a session's agent keeps running in the directory it named.
export const sessionWorkspaceStatusMigration: Migration = {
  version: 7,
  name: 'session-workspace-status',
  sql: `
    ALTER TABLE sessions ADD COLUMN workspace_status TEXT;
  `,
};
