import { mkdtempSync, readlinkSync } from 'node:fs';
import { lstat, mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { hasProcFilesystem, isAlive, readProcessStatus } from './proc-filesystem.js';

/**
 * Temporary folders named for the process that made them: `<prefix><pid namespace>-<pid>-<start
 * time>-XXXXXX`. Tether removes its folders when it ends, but a host that is SIGKILLed removes
 * nothing; the name lets a later host tell such a leftover (its creator is gone) from the folder of
 * a host still running, and remove only the leftovers. A value that cannot be read is written 0.
 */

interface Creator {
  readonly namespace: number;
  readonly pid: number;
  readonly startTime: number;
}

let self: Creator | undefined;

/** The pid namespace's inode: a pid means this process only within the namespace it was read in. */
function pidNamespaceOf(): number {
  try {
    return Number(/^pid:\[(\d+)\]$/.exec(readlinkSync('/proc/self/ns/pid'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/** This process, read once. */
function thisProcess(): Creator {
  self ??= {
    namespace: pidNamespaceOf(),
    pid: process.pid,
    startTime: readProcessStatus(process.pid)?.startTime ?? 0,
  };
  return self;
}

function folderPrefix(prefix: string, directory = os.tmpdir()): string {
  const { namespace, pid, startTime } = thisProcess();
  return path.join(directory, `${prefix}${namespace}-${pid}-${startTime}-`);
}

/** A new empty folder (0700) in the temporary directory, named for this process. */
export function createCreatorNamedFolderSync(prefix: string): string {
  return mkdtempSync(folderPrefix(prefix));
}

/** A new empty folder (0700) in `directory` (the temporary directory by default), named for this process. */
export function createCreatorNamedFolder(prefix: string, directory?: string): Promise<string> {
  return mkdtemp(folderPrefix(prefix, directory));
}

/** The creator a folder's name records, or undefined for a name not made here (e.g. by an older Tether). */
export function creatorOf(name: string, prefix: string): Creator | undefined {
  if (!name.startsWith(prefix)) return undefined;
  const match = /^(\d+)-(\d+)-(\d+)-[A-Za-z0-9]{6}$/.exec(name.slice(prefix.length));
  if (!match) return undefined;
  const [namespace, pid, startTime] = match.slice(1).map(Number) as [number, number, number];
  return pid > 0 ? { namespace, pid, startTime } : undefined;
}

/**
 * Whether the creator is certainly gone. A pid read in another pid namespace (a container sharing
 * the temporary directory) names some other process here: such a folder is never judged.
 */
function creatorEnded(creator: Creator): boolean {
  const here = thisProcess();
  if (creator.namespace !== here.namespace) return false;
  if (creator.pid === here.pid) return creator.startTime !== here.startTime && here.startTime !== 0;
  if (!hasProcFilesystem()) return !isAlive(creator.pid);
  const status = readProcessStatus(creator.pid);
  if (status === undefined || status.state === 'Z' || status.state === 'X') return true;
  // The pid was taken again by a later process.
  return creator.startTime !== 0 && status.startTime !== creator.startTime;
}

/**
 * The folders with one of `prefixes` that a process now gone made (a host that was killed before
 * it could remove them), and only those this user owns: never a symbolic link, another user's
 * folder, or one whose creator cannot be told. Never rejects.
 */
export async function foldersOfEndedCreators(
  prefixes: readonly string[],
  directory: string = os.tmpdir(),
): Promise<string[]> {
  const uid = process.getuid?.();
  if (uid === undefined) return [];
  let names: string[];
  try {
    names = await readdir(directory);
  } catch {
    return [];
  }
  const found = await Promise.all(
    names.map(async (name) => {
      const prefix = prefixes.find((candidate) => name.startsWith(candidate));
      const creator = prefix === undefined ? undefined : creatorOf(name, prefix);
      if (!creator || !creatorEnded(creator)) return [];
      const folder = path.join(directory, name);
      try {
        const stats = await lstat(folder);
        return stats.isDirectory() && stats.uid === uid ? [folder] : [];
      } catch {
        // Gone meanwhile.
        return [];
      }
    }),
  );
  return found.flat();
}

/**
 * Removes the folders foldersOfEndedCreators finds, each once `clear` (if given) has dealt with what
 * it names and said it may go. Returns what was removed. Never rejects.
 */
export async function removeFoldersOfEndedCreators(
  prefixes: readonly string[],
  directory: string = os.tmpdir(),
  clear?: (folder: string) => Promise<boolean>,
): Promise<string[]> {
  const removed: string[] = [];
  await Promise.all(
    (await foldersOfEndedCreators(prefixes, directory)).map(async (folder) => {
      try {
        if (clear && !(await clear(folder))) return;
        await rm(folder, { recursive: true, force: true });
        removed.push(folder);
      } catch {
        // Not ours to remove after all.
      }
    }),
  );
  return removed;
}
