import { DatabaseSync } from 'node:sqlite';
import type { AgentError } from '@tether/protocol';
import { storeFailure } from '../store-failure.js';
import { inImmediateTransaction } from '../transaction.js';
import { latestSchemaVersion, migrations } from './migrations.js';

/** The refusal of a database whose schema a newer Tether wrote; null for one this Tether can open. */
export function schemaTooNew(newest: number, databasePath: string): AgentError | null {
  if (newest <= latestSchemaVersion) return null;
  return storeFailure(
    `The database ${databasePath} has schema version ${newest}, but this Tether knows only versions up to ${latestSchemaVersion}: a newer Tether wrote it. Upgrade Tether to open it, or use another --data-dir.`,
    'schema_too_new',
  );
}

/**
 * What opening the data dir's database would refuse for its schema, read without opening the store
 * (nothing is migrated or locked): tether doctor asks. Null when it can be opened, or has no database yet.
 */
export function databaseSchemaRefusal(databasePath: string): AgentError | null {
  let database: DatabaseSync;
  try {
    database = new DatabaseSync(databasePath, { readOnly: true });
  } catch {
    return null;
  }
  try {
    const row = database.prepare('SELECT max(version) AS newest FROM schema_migrations').get();
    return schemaTooNew(Number(row?.['newest'] ?? 0), databasePath);
  } catch {
    // No table yet (a database never migrated), or unreadable: opening it says what is wrong.
    return null;
  } finally {
    database.close();
  }
}

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
  const refusal = schemaTooNew(Math.max(0, ...applied), databasePath);
  if (refusal !== null) throw refusal;
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
