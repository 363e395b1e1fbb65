import { initialMigration } from './0001-initial.js';
import type { Migration } from './migration.js';

/** Every schema step, in order. Append only. */
export const migrations: readonly Migration[] = [initialMigration];

export const latestSchemaVersion = migrations.at(-1)?.version ?? 0;
