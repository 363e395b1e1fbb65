import type { Pool } from 'pg';
import { storeFailure } from '../store-failure.js';
import { inTransaction } from '../transaction.js';
import { latestSchemaVersion, migrations } from './migrations.js';

/**
 * The advisory lock every Tether takes to migrate: an arbitrary constant, the same in every version,
 * so daemons starting together take turns and the second finds the work done.
 */
const migrationLockKey = 7_428_113_960_227_511n;

/** A database a newer Tether migrated: refused whole, nothing touched. */
export function schemaTooNew(databaseName: string, newest: number) {
  return storeFailure(
    `The database ${databaseName} has schema version ${newest}, but this Tether knows only versions up to ${latestSchemaVersion}: a newer Tether wrote it. Upgrade Tether to use it, or point --store at another database.`,
    'schema_too_new',
  );
}

/**
 * Brings the schema up to date in one transaction holding a transaction-level advisory lock, each
 * missing migration recorded once in schema_migrations. The lock ends with the transaction, so a
 * daemon that dies while migrating leaves no lock behind and no half-applied schema.
 */
export async function applyMigrations(pool: Pool, databaseName: string): Promise<void> {
  await inTransaction(pool, async (client) => {
    await client.query('SELECT pg_advisory_xact_lock($1)', [migrationLockKey.toString()]);
    await client.query(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at text NOT NULL)',
    );
    const { rows } = await client.query<{ version: number }>('SELECT version FROM schema_migrations');
    const applied = new Set(rows.map((row) => Number(row.version)));
    const newest = Math.max(0, ...applied);
    if (newest > latestSchemaVersion) throw schemaTooNew(databaseName, newest);
    for (const migration of migrations) {
      if (applied.has(migration.version)) continue;
      await client.query(migration.sql);
      await client.query('INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)', [
        migration.version,
        migration.name,
        new Date().toISOString(),
      ]);
    }
  });
}
