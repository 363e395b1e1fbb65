import { initialMigration } from './0001-initial.js';
import type { Migration } from './migration.js';

/** Every migration, in version order. */
export const migrations: readonly Migration[] = [initialMigration];

export const latestSchemaVersion = Math.max(...migrations.map((migration) => migration.version));
