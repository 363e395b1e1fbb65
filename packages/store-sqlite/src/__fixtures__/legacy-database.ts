import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { migrations } from '../migrations/migrations.js';

/**
 * Builds tether.db by hand as a release at `version` left it (its migrations only, recorded as
 * applied), then lets `fill` write rows in that release's schema.
 */
export function createDatabaseAtVersion(dataDir: string, version: number, fill: (database: DatabaseSync) => void): void {
  mkdirSync(dataDir, { mode: 0o700 });
  const database = new DatabaseSync(path.join(dataDir, 'tether.db'));
  try {
    database.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL) STRICT');
    const record = database.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)');
    for (const migration of migrations.filter((step) => step.version <= version)) {
      database.exec(migration.sql);
      record.run(migration.version, migration.name, '2025-01-02T03:04:05.000Z');
    }
    fill(database);
  } finally {
    database.close();
  }
}
