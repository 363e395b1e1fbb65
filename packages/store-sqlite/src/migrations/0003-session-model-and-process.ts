import type { Migration } from './migration.js';

// Both nullable: sessions written before them read back as "not yet known" and "no process".
export const sessionModelAndProcessMigration: Migration = {
  version: 3,
  name: 'session-model-and-process',
  sql: `
    ALTER TABLE sessions ADD COLUMN model TEXT;
    ALTER TABLE sessions ADD COLUMN live_process TEXT;
  `,
};
