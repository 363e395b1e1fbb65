import { chmodSync, mkdirSync } from 'node:fs';
import { AgentError } from '@tether/protocol';
import { acquireDataDirectoryLock, type DataDirectoryLock } from './data-directory-lock.js';

/** Creates the data directory if missing, private to the user: it holds session configuration, environment values included. */
export function ensureDataDirectory(dataDir: string): void {
  const created = mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  // mkdir's mode is filtered by the umask; say it once more for the directory we made.
  if (created !== undefined) chmodSync(dataDir, 0o700);
}

/** Takes the data directory for this runtime, or says who holds it and what to do. */
export function claimDataDirectory(dataDir: string): DataDirectoryLock {
  const attempt = acquireDataDirectoryLock(dataDir);
  if (attempt.acquired) return attempt.lock;
  if (attempt.sameProcess) {
    throw new AgentError({
      code: 'data_dir_in_use',
      message: `The data directory ${dataDir} is already open in this process (pid ${process.pid}). Close the other store first, or use another --data-dir.`,
      details: { ownerPid: process.pid },
    });
  }
  throw new AgentError({
    code: 'data_dir_in_use',
    message:
      attempt.ownerPid === null
        ? `The data directory ${dataDir} is being taken by other processes. Stop the other Tether processes using it, or use another --data-dir.`
        : `The data directory ${dataDir} is in use by another Tether process (pid ${attempt.ownerPid}). Stop that process, or use another --data-dir.`,
    ...(attempt.ownerPid === null ? {} : { details: { ownerPid: attempt.ownerPid } }),
  });
}
