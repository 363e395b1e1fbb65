import { chmodSync, existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
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

it('keeps the data directory and its files private to the user', async () => {
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

it('refuses an existing data directory others can write in, and tightens one they can only read', async () => {
  const open = path.join(directory.path, 'open');
  mkdirSync(open);
  chmodSync(open, 0o777);
  await expect(openSqliteStore({ dataDir: open })).rejects.toMatchObject({
    code: 'data_dir_unsafe',
    details: { reason: 'data_dir_writable' },
  });
  expect(existsSync(path.join(open, 'tether.db')), 'nothing is written into it').toBe(false);

  const readable = path.join(directory.path, 'readable');
  mkdirSync(readable);
  chmodSync(readable, 0o755);
  const store = await openSqliteStore({ dataDir: readable });
  await store.close();
  expect(modeOf(readable)).toBe('700');
});

it('refuses a lock file that is not private to the user', async () => {
  const dataDir = path.join(directory.path, 'data');
  mkdirSync(dataDir, { mode: 0o700 });
  writeFileSync(path.join(dataDir, 'tether.lock'), JSON.stringify({ pid: 1 }), { mode: 0o666 });
  chmodSync(path.join(dataDir, 'tether.lock'), 0o666);
  await expect(openSqliteStore({ dataDir })).rejects.toMatchObject({
    code: 'data_dir_unsafe',
    details: { reason: 'file_not_private' },
  });
});
