// Node built-ins only: a test's child process loads this file directly through Node's type
// stripping, to hold a data directory the way another runtime would.
import { randomUUID } from 'node:crypto';
import {
  closeSync,
  fstatSync,
  fsyncSync,
  linkSync,
  openSync,
  readFileSync,
  realpathSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import path from 'node:path';

export const lockFileName = 'tether.lock';

export interface DataDirectoryLock {
  readonly lockPath: string;
  /** Removes the lock file if it is still ours. Idempotent. */
  release(): void;
}

export type LockAttempt =
  | { readonly acquired: true; readonly lock: DataDirectoryLock }
  | { readonly acquired: false; readonly ownerPid: number | null; readonly sameProcess: boolean };

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

/**
 * When a process started, in clock ticks since boot (field 22 of /proc/<pid>/stat); null without
 * /proc (macOS, Windows) or once the process is gone. A pid is reused, its start time is not: the
 * lock records it so a later opener can tell its owner from an unrelated process that got the same
 * pid (after a reboot, or in a container where pids restart low). Kept here rather than shared with
 * provider-claude's /proc reader: the store may not import a provider, no package both may import
 * holds file-system code, and this file must load with Node built-ins alone (see the top).
 */
export function processStartTicks(pid: number): number | null {
  return processStat(pid)?.startTicks ?? null;
}

/** A process's state letter and start (fields 3 and 22 of /proc/PID/stat); null without /proc or the process. */
function processStat(pid: number): { readonly state: string; readonly startTicks: number | null } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 2 (the command name, in parentheses) may hold spaces and parentheses: count from its end.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[22 - 3]);
    return { state: fields[0] ?? '', startTicks: Number.isSafeInteger(ticks) ? ticks : null };
  } catch {
    return null;
  }
}

const processStartedAt = new Date(Date.now() - process.uptime() * 1000).toISOString();
const processStart = processStartTicks(process.pid);

interface LockOwner {
  readonly pid: number;
  /** The owner's start in clock ticks since boot; null in a lock written without /proc or by an older Tether. */
  readonly startTicks: number | null;
  /** The file the owner made (`<device>:<inode>`); null in a lock written by an older Tether. */
  readonly file: string | null;
  /** The data directory the owner locked (its real path); null in a lock written by an older Tether. */
  readonly directory: string | null;
}

/** A lock file as read: its text, which file it is, and the directory it was read in (its real path). */
interface LockFile {
  readonly text: string;
  readonly file: string;
  readonly directory: string;
}

function fileIdentity(stats: { readonly dev: number; readonly ino: number }): string {
  return `${stats.dev}:${stats.ino}`;
}

function parseLock(text: string): LockOwner | null {
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed !== 'object' || parsed === null) return null;
    const { pid, startTicks, file, directory } = parsed as {
      pid?: unknown;
      startTicks?: unknown;
      file?: unknown;
      directory?: unknown;
    };
    if (typeof pid !== 'number' || !Number.isInteger(pid) || pid <= 0) return null;
    return {
      pid,
      startTicks: typeof startTicks === 'number' && Number.isSafeInteger(startTicks) ? startTicks : null,
      file: typeof file === 'string' ? file : null,
      directory: typeof directory === 'string' ? directory : null,
    };
  } catch {
    return null;
  }
}

/**
 * The owner a lock names, unless the lock is a copy: a data directory copied (or moved to another
 * file system) while its owner ran carries the owner's lock, which that owner does not hold there.
 * A copy is another file in another directory: either alone is no proof (a file system that numbers
 * its files anew, as some network and FUSE ones do, or a directory reached by another path).
 */
function ownerOf(lock: LockFile): LockOwner | null {
  const owner = parseLock(lock.text);
  if (owner === null) return null;
  const otherFile = owner.file !== null && owner.file !== lock.file;
  const otherDirectory = owner.directory !== null && owner.directory !== lock.directory;
  return otherFile && otherDirectory ? null : owner;
}

/** Reads the owner pid from a lock file's text; null when the text is not a lock we wrote. */
export function parseLockOwner(text: string): number | null {
  return parseLock(text)?.pid ?? null;
}

/**
 * Whether the lock's owner still runs: its pid is alive and, where both are known, started when the lock says.
 * This is the one "is the owner of a data directory alive" check: the daemon's daemon.json (whose
 * writer holds this lock) and the CLI ask it through dataDirectoryLockOwner instead of signalling pids
 * themselves. The agents' processes have the other one, provider-claude's isAlive (zombie-aware, /proc):
 * the two cannot share code, because the store and provider-claude may not import each other (DEVELOPERS.md's
 * layering), the one package both may import (protocol) runs in browsers too, and this file must load with
 * Node built-ins alone (see the top).
 */
function isAlive(owner: LockOwner): boolean {
  try {
    process.kill(owner.pid, 0);
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const stat = processStat(owner.pid);
  // A killed owner whose parent has not reaped it yet is a zombie: signal 0 still reaches it, but it
  // holds nothing and answers nobody (seen for 1-2 s after a kill -9 here, for ever under a parent that never waits).
  if (stat !== null && (stat.state === 'Z' || stat.state === 'X')) return false;
  if (owner.startTicks === null) return true;
  return stat?.startTicks == null || stat.startTicks === owner.startTicks;
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
    // The link below keeps this file (its inode): the lock names it, so a copy of it names another.
    const { dev, ino } = fstatSync(descriptor);
    writeSync(
      descriptor,
      `${JSON.stringify({ pid: process.pid, startedAt: processStartedAt, ...(processStart === null ? {} : { startTicks: processStart }), file: fileIdentity({ dev, ino }), directory: realDirectoryOf(lockPath) })}\n`,
    );
    fsyncSync(descriptor);
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
  const moved = readLock(asidePath);
  if (moved !== null && ownedByLiveProcess(moved)) {
    try {
      linkSync(asidePath, filePath);
    } catch (error) {
      if (errorCode(error) !== 'EEXIST') throw error;
    }
  }
  unlinkSync(asidePath);
}

function ownedByLiveProcess(lock: LockFile): boolean {
  const owner = ownerOf(lock);
  return owner !== null && owner.pid !== process.pid && isAlive(owner);
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

/** The real path of the directory a lock file is in (as it was given, when it cannot be resolved). */
function realDirectoryOf(lockPath: string): string {
  const directory = path.dirname(lockPath);
  try {
    return realpathSync(directory);
  } catch {
    return directory;
  }
}

/** A lock file's text and identity; null if there is none. */
function readLock(lockPath: string): LockFile | null {
  let descriptor: number;
  try {
    descriptor = openSync(lockPath, 'r');
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return null;
    throw error;
  }
  try {
    return {
      text: readFileSync(descriptor, 'utf8'),
      file: fileIdentity(fstatSync(descriptor)),
      directory: realDirectoryOf(lockPath),
    };
  } finally {
    closeSync(descriptor);
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
 * Who holds a data directory, read without taking it: null when no lock names a process; `running`
 * false for a stale lock, which the next opener takes over.
 */
export function dataDirectoryLockOwner(dataDir: string): { readonly pid: number; readonly running: boolean } | null {
  let lock: LockFile | null;
  try {
    lock = readLock(path.join(dataDir, lockFileName));
  } catch {
    return null;
  }
  const owner = lock === null ? null : parseLock(lock.text);
  if (owner === null || lock === null) return null;
  // A copied lock names a process that holds another directory: stale here, whoever it names.
  const copied = ownerOf(lock) === null;
  return { pid: owner.pid, running: !copied && (owner.pid === process.pid || isAlive(owner)) };
}

/**
 * Takes `<dataDir>/tether.lock` for this process, or reports who holds it. A lock whose owner is
 * no longer running (its pid gone, or now a process that started at another time than the lock
 * records, or this very pid, left by an earlier process) is taken over.
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
    if (ownedByLiveProcess(existing))
      return { acquired: false, ownerPid: parseLockOwner(existing.text), sameProcess: false };
    takeOverStaleLock(lockPath);
  }
  // Other openers kept taking the lock over under us: report it as held rather than loop forever.
  return { acquired: false, ownerPid: null, sameProcess: false };
}
