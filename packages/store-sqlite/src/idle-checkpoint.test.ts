import { statSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { makeTemporaryDirectory } from './__fixtures__/temporary-directory.js';
import { sampleUnit, sessionId } from './__fixtures__/sample-records.js';
import { openSqliteStore, type SqliteStore } from './index.js';

let directory: Awaited<ReturnType<typeof makeTemporaryDirectory>>;
let store: SqliteStore;
beforeEach(async () => {
  vi.useFakeTimers();
  directory = await makeTemporaryDirectory();
  store = await openSqliteStore({ dataDir: path.join(directory.path, 'data') });
});
afterEach(async () => {
  await store.close();
  vi.useRealTimers();
  await directory.remove();
});

const logSize = () => statSync(`${store.databasePath}-wal`).size;

it('checkpoints the write-ahead log once the store rests, not inside the commit that fills it', async () => {
  // ~10 MB of events without a rest: well past the 1,000 pages (4 MB) at which SQLite's own
  // checkpoint ran inside a commit and kept the log at that size.
  for (let batch = 0; batch < 60; batch += 1) await store.commit(sampleUnit(batch * 1000 + 1, (batch + 1) * 1000));
  expect(logSize()).toBeGreaterThan(6 * 1024 * 1024);
  await vi.advanceTimersByTimeAsync(200);
  expect(logSize()).toBeGreaterThan(6 * 1024 * 1024);
  await vi.advanceTimersByTimeAsync(100);
  expect(logSize()).toBe(0);
  // Everything is still there, now in the database file.
  expect((await store.getSession(sessionId))?.lastSeq).toBe(60_000);
  expect(await store.readEvents(sessionId, { afterSeq: 59_998, limit: 10 })).toHaveLength(2);
});

it('checkpoints a store that never rests every 1,000 commits, right after the commit that reaches it', async () => {
  for (let seq = 1; seq < 1000; seq += 1) await store.commit(sampleUnit(seq, seq));
  await vi.advanceTimersByTimeAsync(1);
  expect(logSize()).toBeGreaterThan(0);
  await store.commit(sampleUnit(1000, 1000));
  await vi.advanceTimersByTimeAsync(1);
  expect(logSize()).toBe(0);
  expect((await store.getSession(sessionId))?.lastSeq).toBe(1000);
});
