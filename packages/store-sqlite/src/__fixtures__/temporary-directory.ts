import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach } from 'vitest';

/** A fresh directory under the system temp dir; `remove` deletes it and everything in it. */
export async function makeTemporaryDirectory(): Promise<{ readonly path: string; readonly remove: () => Promise<void> }> {
  const directory = await mkdtemp(path.join(tmpdir(), 'tether-store-sqlite-'));
  return { path: directory, remove: () => rm(directory, { recursive: true, force: true }) };
}

/**
 * For a test file whose runtimes restart over one data directory: a fresh data directory and
 * workspace per test (under one temporary directory, removed after it); call at the top of the file.
 */
export function dataDirectoryPerTest(): { readonly dataDir: string; readonly workspace: string } {
  let directory: Awaited<ReturnType<typeof makeTemporaryDirectory>> | undefined;
  beforeEach(async () => {
    directory = await makeTemporaryDirectory();
    await mkdir(path.join(directory.path, 'workspace'));
  });
  afterEach(async () => {
    await directory?.remove();
  });
  return {
    get dataDir() {
      return path.join(directory!.path, 'data');
    },
    get workspace() {
      return path.join(directory!.path, 'workspace');
    },
  };
}
