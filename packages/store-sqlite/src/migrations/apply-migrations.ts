import type { DatabaseSync } from 'node:sqlite';
import { storeFailure } from '../store-failure.js';
import { inImmediateTransaction } from '../transaction.js';
import { latestSchemaVersion, migrations } from './migrations.js';

/** Brings the schema up to date, each missing migration (with its backfill) in its own transaction, recorded once. */
export function applyMigrations(database: DatabaseSync, databasePath: string): void {
  database.exec(
    'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL) STRICT',
  );
  const applied = new Set(
    database
      .prepare('SELECT version FROM schema_migrations')
      .all()
      .map((row) => Number(row['version'])),
  );
  const newest = Math.max(0, ...applied);
  if (newest > latestSchemaVersion) {
    throw storeFailure(
      `The database ${databasePath} has schema version ${newest}, but this Tether knows only versions up to ${latestSchemaVersion}: a newer Tether wrote it. Upgrade Tether to open it, or use another --data-dir.`,
      'schema_too_new',
    );
  }
  const record = database.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)');
  for (const migration of migrations) {
    if (applied.has(migration.version)) continue;
    inImmediateTransaction(database, () => {
      database.exec(migration.sql);
      migration.backfill?.(database);
      record.run(migration.version, migration.name, new Date().toISOString());
    });
  }
}
