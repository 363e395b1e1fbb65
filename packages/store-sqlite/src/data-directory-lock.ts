// Node built-ins only: a test's child process loads this file directly through Node's type
// stripping, to hold a data directory the way another runtime would.
import { randomUUID } from 'node:crypto';
import { closeSync, fstatSync, fsyncSync, linkSync, openSync, readFileSync, realpathSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';
import path from 'node:path';

const lockFileName = 'tether.lock';

export interface DataDirectoryLock {
  readonly lockPath: string;
  /** Removes the lock file if it is still ours. Idempotent. */
  release(): void;
}

export type LockAttempt = { readonly acquired: true; readonly lock: DataDirectoryLock } | { readonly acquired: false; readonly ownerPid: number | null; readonly sameProcess: boolean };

interface HeldLock {
  readonly lockPath: string;
  readonly device: number;
  readonly inode: number;
}

interface ProcessLockState {
  readonly held: Map<string, HeldLock>;
  exitHandlerInstalled: boolean;
}

// On globalThis, so two copies of this package in one process still see each other's locks.
const stateKey = Symbol.for('tether.store-sqlite.data-directory-locks');

function processLockState(): ProcessLockState {
  const holder = globalThis as unknown as Record<symbol, ProcessLockState | undefined>;
  holder[stateKey] ??= { held: new Map(), exitHandlerInstalled: false };
  return holder[stateKey];
}

const processStartedAt = new Date(Date.now() - process.uptime() * 1000).toISOString();

/** Reads the owner pid from a lock file's text; null when the text is not a lock we wrote. */
export function parseLockOwner(text: string): number | null {
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed !== 'object' || parsed === null) return null;
    const pid = (parsed as { pid?: unknown }).pid;
    return typeof pid === 'number' && Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function errorCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

function unlinkIfPresent(filePath: string): void {
  try {
    unlinkSync(filePath);
  } catch (error) {
    if (errorCode(error) !== 'ENOENT') throw error;
  }
}

/**
 * Writes the whole lock to a private file, then hard-links it into place: the link either
 * creates the lock atomically, complete with its content, or fails because a lock exists.
 * Readers therefore never see a half-written lock.
 */
function tryCreateLock(lockPath: string): HeldLock | null {
  const temporaryPath = `${lockPath}.${process.pid}.${randomUUID()}.tmp`;
  const descriptor = openSync(temporaryPath, 'wx', 0o600);
  try {
    writeSync(descriptor, `${JSON.stringify({ pid: process.pid, startedAt: processStartedAt })}\n`);
    fsyncSync(descriptor);
    const { dev, ino } = fstatSync(descriptor);
    try {
      linkSync(temporaryPath, lockPath);
    } catch (error) {
      if (errorCode(error) === 'EEXIST') return null;
      throw error;
    }
    return { lockPath, device: dev, inode: ino };
  } finally {
    closeSync(descriptor);
    unlinkSync(temporaryPath);
  }
}

/**
 * Moves a file aside by renaming it (atomic, so only one process moves any given file) and
 * deletes it unless a live process turns out to own what was moved, which is then put back.
 * Only for the takeover guard of a process that died mid-takeover: a rare crash window.
 */
function removeDeadFile(filePath: string): void {
  const asidePath = `${filePath}.${process.pid}.${randomUUID()}.dead`;
  try {
    renameSync(filePath, asidePath);
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return;
    throw error;
  }
  if (ownedByLiveProcess(readFileSync(asidePath, 'utf8'))) {
    try {
      linkSync(asidePath, filePath);
    } catch (error) {
      if (errorCode(error) !== 'EEXIST') throw error;
    }
  }
  unlinkSync(asidePath);
}

function ownedByLiveProcess(text: string): boolean {
  const ownerPid = parseLockOwner(text);
  return ownerPid !== null && ownerPid !== process.pid && isAlive(ownerPid);
}

/**
 * Deletes a stale lock, but only while holding `tether.lock.takeover`, and only if the lock it
 * reads under that guard is still stale. Openers never delete a lock any other way (its owner
 * aside), so two openers cannot both take over, nor delete a lock a third has just created.
 */
function takeOverStaleLock(lockPath: string): void {
  const takeoverPath = `${lockPath}.takeover`;
  const guard = tryCreateLock(takeoverPath);
  if (!guard) {
    const other = readLock(takeoverPath);
    if (other && !ownedByLiveProcess(other)) removeDeadFile(takeoverPath);
    return;
  }
  try {
    const current = readLock(lockPath);
    if (current !== null && !ownedByLiveProcess(current)) unlinkIfPresent(lockPath);
  } finally {
    unlinkIfPresent(takeoverPath);
  }
}

/** The text of a lock file; null if there is none. */
function readLock(lockPath: string): string | null {
  try {
    return readFileSync(lockPath, 'utf8');
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return null;
    throw error;
  }
}

function releaseHeld(key: string): void {
  const state = processLockState();
  const held = state.held.get(key);
  if (!held) return;
  state.held.delete(key);
  try {
    const current = statSync(held.lockPath);
    if (current.dev === held.device && current.ino === held.inode) unlinkSync(held.lockPath);
  } catch (error) {
    if (errorCode(error) !== 'ENOENT') throw error;
  }
}

function installExitHandler(state: ProcessLockState): void {
  if (state.exitHandlerInstalled) return;
  state.exitHandlerInstalled = true;
  process.once('exit', () => {
    for (const key of [...state.held.keys()]) {
      try {
        releaseHeld(key);
      } catch {
        // Best effort: the next opener treats a dead owner's lock as stale.
      }
    }
  });
}

/**
 * Takes `<dataDir>/tether.lock` for this process, or reports who holds it. A lock whose owner is
 * no longer running (or is this very pid, left by an earlier process) is taken over.
 * The directory must exist.
 */
export function acquireDataDirectoryLock(dataDir: string): LockAttempt {
  const key = realpathSync(dataDir);
  const state = processLockState();
  if (state.held.has(key)) return { acquired: false, ownerPid: process.pid, sameProcess: true };
  const lockPath = path.join(key, lockFileName);
  for (let attempt = 0; attempt < 10; attempt += 1) {
    const created = tryCreateLock(lockPath);
    if (created) {
      state.held.set(key, created);
      installExitHandler(state);
      return { acquired: true, lock: { lockPath, release: () => releaseHeld(key) } };
    }
    const existing = readLock(lockPath);
    if (!existing) continue;
    if (ownedByLiveProcess(existing)) return { acquired: false, ownerPid: parseLockOwner(existing), sameProcess: false };
    takeOverStaleLock(lockPath);
  }
  // Other openers kept taking the lock over under us: report it as held rather than loop forever.
  return { acquired: false, ownerPid: null, sameProcess: false };
}
