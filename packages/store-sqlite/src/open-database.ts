import { chmodSync, closeSync, openSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import { AgentError } from '@tether/protocol';
import { isDatabaseBusy } from './store-failure.js';

const busyTimeoutMs = 5_000;

/** Creates the file before SQLite does, so it is never readable by others, even briefly. */
function ensurePrivateFile(filePath: string): void {
  closeSync(openSync(filePath, 'a', 0o600));
  chmodSync(filePath, 0o600);
}

/**
 * Opens the database in WAL mode and takes SQLite's exclusive lock for as long as it is open.
 * The lock file names the owner; this lock is what actually keeps a second process out, and
 * the operating system drops it when the process dies, so it can never go stale.
 */
export function openDatabase(databasePath: string): DatabaseSync {
  ensurePrivateFile(databasePath);
  // No busy wait while claiming: a process that holds the database will not let go soon.
  const database = new DatabaseSync(databasePath, { timeout: 0 });
  try {
    database.exec('PRAGMA locking_mode = EXCLUSIVE');
    database.exec('PRAGMA journal_mode = WAL');
    database.exec('PRAGMA synchronous = NORMAL');
    // Checkpointed when the store rests, not inside whichever commit fills the log (IdleCheckpoint).
    database.exec('PRAGMA wal_autocheckpoint = 0');
    database.exec('PRAGMA foreign_keys = ON');
    database.exec('BEGIN IMMEDIATE; COMMIT');
    database.exec(`PRAGMA busy_timeout = ${busyTimeoutMs}`);
    return database;
  } catch (error) {
    database.close();
    if (!isDatabaseBusy(error)) throw error;
    throw new AgentError({
      code: 'data_dir_in_use',
      message: `The database ${databasePath} is held by another process (another Tether, or a tool such as the sqlite3 shell). Stop that process, or use another --data-dir.`,
      cause: error,
    });
  }
}
