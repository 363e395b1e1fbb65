import { initialMigration } from './0001-initial.js';
import { sessionLeasesMigration } from './0002-session-leases.js';
import { sessionFollowUpsAndLimitsMigration } from './0003-session-follow-ups-and-limits.js';
import { runtimeRenewalRunsMigration } from './0004-runtime-renewal-runs.js';
import type { Migration } from './migration.js';

/** Every migration, in version order. */
export const migrations: readonly Migration[] = [
  initialMigration,
  sessionLeasesMigration,
  sessionFollowUpsAndLimitsMigration,
  runtimeRenewalRunsMigration,
];

export const latestSchemaVersion = Math.max(...migrations.map((migration) => migration.version));
