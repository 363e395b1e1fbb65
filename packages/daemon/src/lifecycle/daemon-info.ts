import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { readPrivateDataFile } from '@tether/store-sqlite';
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

function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, it just is not ours to signal.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export async function writeDaemonInfo(dataDir: string, info: DaemonInfo): Promise<void> {
  await writePrivateFile(infoPath(dataDir), `${JSON.stringify(info)}\n`);
}

/**
 * The running daemon of a data directory, from its daemon.json; null when there is none, the file is
 * not one of ours (malformed), or its process is gone; data_dir_unsafe when the file is not ours alone
 * (another user's, or writable by others) (a daemon killed with SIGKILL cannot remove the file). A pid can
 * be reused: confirm with GET /health before relying on it.
 */
export async function readDaemonInfo(dataDir: string): Promise<DaemonInfo | null> {
  // Local commands send the token to the url in this file: one someone else wrote is refused, never followed.
  const text = readPrivateDataFile(infoPath(dataDir), 'Remove it: no daemon of yours wrote it, and the token is never sent to the address it names. Then start `tether serve` again.');
  if (text === null) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return null;
  }
  const info = DaemonInfo.safeParse(parsed);
  if (!info.success || !processExists(info.data.pid)) return null;
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
