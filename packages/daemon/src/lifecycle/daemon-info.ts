import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { dataDirectoryLockOwner, readPrivateDataFile } from '@tether/store-sqlite';
import { z } from 'zod';
import { writePrivateFile } from '../auth/private-files.js';

export const daemonInfoFileName = 'daemon.json';

/** What a running daemon leaves in its data directory so local commands find it (never the token). */
export const DaemonInfo = z.object({
  url: z.string(),
  pid: z.number().int().positive(),
  startedAt: z.string(),
});
export type DaemonInfo = z.infer<typeof DaemonInfo>;

function infoPath(dataDir: string): string {
  return path.join(path.resolve(dataDir), daemonInfoFileName);
}

/**
 * Whether the daemon that wrote daemon.json still runs, asked of the one "is this owner alive" check
 * there is for a data directory: the store's lock (store-sqlite's data-directory-lock.ts), which the
 * daemon holds from before it writes daemon.json until after it stops listening, and which checks the
 * pid's start time too (a pid reused since is not taken for the daemon). Not provider-claude's
 * isAlive: that one watches the agents' processes, not who owns the data directory.
 */
function daemonRunning(dataDir: string, pid: number): boolean {
  const owner = dataDirectoryLockOwner(dataDir);
  return owner !== null && owner.pid === pid && owner.running;
}

export async function writeDaemonInfo(dataDir: string, info: DaemonInfo): Promise<void> {
  await writePrivateFile(infoPath(dataDir), `${JSON.stringify(info)}\n`);
}

/**
 * The running daemon of a data directory, from its daemon.json; null when there is none, the file is
 * not one of ours (malformed), or its process is gone; data_dir_unsafe when the file is not ours alone
 * (another user's, or writable by others) (a daemon killed with SIGKILL cannot remove the file). The pid
 * must own the data directory's lock, start time checked; still, confirm with GET /health before relying on it.
 */
export async function readDaemonInfo(dataDir: string): Promise<DaemonInfo | null> {
  // Local commands send the token to the url in this file: one someone else wrote is refused, never followed.
  const text = readPrivateDataFile(
    infoPath(dataDir),
    'Remove it: no daemon of yours wrote it, and the token is never sent to the address it names. Then start `tether serve` again.',
  );
  if (text === null) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return null;
  }
  const info = DaemonInfo.safeParse(parsed);
  if (!info.success || !daemonRunning(dataDir, info.data.pid)) return null;
  return info.data;
}

/** Removes daemon.json if it still describes this process (a successor may have written its own). */
export async function removeDaemonInfo(dataDir: string, pid: number): Promise<void> {
  try {
    const current = DaemonInfo.safeParse(JSON.parse(await readFile(infoPath(dataDir), 'utf8')));
    if (current.success && current.data.pid !== pid) return;
  } catch {
    // Missing or unreadable: nothing of ours to keep.
  }
  await rm(infoPath(dataDir), { force: true });
}
