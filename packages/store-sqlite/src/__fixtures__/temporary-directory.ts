import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** A fresh directory under the system temp dir; `remove` deletes it and everything in it. */
export async function makeTemporaryDirectory(): Promise<{ readonly path: string; readonly remove: () => Promise<void> }> {
  const directory = await mkdtemp(path.join(tmpdir(), 'tether-store-sqlite-'));
  return { path: directory, remove: () => rm(directory, { recursive: true, force: true }) };
}
