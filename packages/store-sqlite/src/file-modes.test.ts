import { statSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { makeTemporaryDirectory } from './__fixtures__/temporary-directory.js';
import { sampleUnit } from './__fixtures__/sample-records.js';
import { openSqliteStore } from './index.js';

let directory: Awaited<ReturnType<typeof makeTemporaryDirectory>>;
beforeEach(async () => {
  directory = await makeTemporaryDirectory();
});
afterEach(async () => {
  await directory.remove();
});

function modeOf(filePath: string): string {
  return (statSync(filePath).mode & 0o777).toString(8);
}

// POSIX permissions: Windows has no equivalent of these mode bits.
it.skipIf(process.platform === 'win32')('keeps the data directory and its files private to the user', async () => {
  const dataDir = path.join(directory.path, 'nested', 'data');
  const store = await openSqliteStore({ dataDir });
  try {
    await store.commit(sampleUnit(1, 3));
    expect(modeOf(dataDir)).toBe('700');
    expect(modeOf(store.databasePath)).toBe('600');
    expect(modeOf(`${store.databasePath}-wal`)).toBe('600');
    expect(modeOf(path.join(dataDir, 'tether.lock'))).toBe('600');
  } finally {
    await store.close();
  }
});
