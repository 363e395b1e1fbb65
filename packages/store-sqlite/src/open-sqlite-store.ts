import path from 'node:path';
import { lockDataDirectory } from './data-directory.js';
import { applyMigrations } from './migrations/apply-migrations.js';
import { openDatabase } from './open-database.js';
import { createSqliteStore, type SqliteStore } from './sqlite-store.js';
import { guardStore } from './store-failure.js';

export interface SqliteStoreOptions {
  /** The data directory; created (mode 0700) if missing, refused (data_dir_unsafe) if another user owns it or could write in it. See resolveDataDir. */
  readonly dataDir: string;
}

/** The data dir's SQLite database file. */
export const databaseFileName = 'tether.db';

/**
 * Opens (creating and migrating as needed) the store in a data directory that this runtime
 * then owns until close(). Rejects with data_dir_in_use if another runtime owns it.
 */
export async function openSqliteStore(options: SqliteStoreOptions): Promise<SqliteStore> {
  const dataDir = path.resolve(options.dataDir);
  const databasePath = path.join(dataDir, databaseFileName);
  const lock = lockDataDirectory(dataDir);
  try {
    return guardStore(`open the database ${databasePath}`, () => {
      const database = openDatabase(databasePath);
      try {
        applyMigrations(database, databasePath);
        return createSqliteStore({ database, dataDir, databasePath, lock });
      } catch (error) {
        database.close();
        throw error;
      }
    });
  } catch (error) {
    lock.release();
    throw error;
  }
}
