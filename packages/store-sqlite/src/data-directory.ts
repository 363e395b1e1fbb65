import path from 'node:path';
import { AgentError } from '@tether/protocol';
import { acquireDataDirectoryLock, type DataDirectoryLock, lockFileName } from './data-directory-lock.js';
import { checkPrivateDataFile, ensureDataDirectory } from './private-data-files.js';
import { guardStore } from './store-failure.js';

/** Takes the data directory for this runtime, or says who holds it and what to do. */
export function claimDataDirectory(dataDir: string): DataDirectoryLock {
  // A lock someone else wrote could name any live process and keep every runtime out.
  checkPrivateDataFile(
    path.join(dataDir, lockFileName),
    'Remove it (no Tether process of yours can be using a lock it did not write), or use another --data-dir.',
  );
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

/**
 * Creates the data directory if needed and takes its lock, for a process whose sessions are stored
 * elsewhere (an external store such as PostgreSQL): the directory still holds the token, daemon.json
 * and the worktrees, which one process at a time must own. release() gives it back.
 */
export function lockDataDirectory(dataDir: string): DataDirectoryLock {
  return guardStore(`open the data directory ${dataDir}`, () => {
    ensureDataDirectory(dataDir);
    return claimDataDirectory(dataDir);
  });
}
