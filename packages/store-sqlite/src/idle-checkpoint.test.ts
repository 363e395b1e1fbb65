import { readFileSync, statSync } from 'node:fs';
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
/** The log's header (32 bytes) and one frame: a 24-byte frame header and its 4,096-byte page. */
const primedLogSize = 32 + 24 + 4096;

it('checkpoints the write-ahead log once the store rests, not inside the commit that fills it', async () => {
  // ~10 MB of events without a rest: well past the 1,000 pages (4 MB) at which SQLite's own
  // checkpoint ran inside a commit and kept the log at that size.
  for (let batch = 0; batch < 60; batch += 1) await store.commit(sampleUnit(batch * 1000 + 1, (batch + 1) * 1000));
  expect(logSize()).toBeGreaterThan(6 * 1024 * 1024);
  await vi.advanceTimersByTimeAsync(200);
  expect(logSize()).toBeGreaterThan(6 * 1024 * 1024);
  await vi.advanceTimersByTimeAsync(100);
  expect(logSize()).toBe(primedLogSize);
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
  expect(logSize()).toBe(primedLogSize);
  expect((await store.getSession(sessionId))?.lastSeq).toBe(1000);
});

it('starts the log again at rest, so the next commit appends to it instead of writing (and syncing) a new header', async () => {
  await store.commit(sampleUnit(1, 1));
  await vi.advanceTimersByTimeAsync(300);
  expect(logSize()).toBe(primedLogSize);
  // A log started again gets new salts in its header: the commit after the rest keeps the header the rest wrote.
  const header = readFileSync(`${store.databasePath}-wal`).subarray(0, 32);
  await store.commit(sampleUnit(2, 2));
  expect(logSize()).toBeGreaterThan(primedLogSize);
  expect(readFileSync(`${store.databasePath}-wal`).subarray(0, 32)).toEqual(header);
  // A rest with no commit after the next checkpoint checkpoints and primes nothing more.
  await vi.advanceTimersByTimeAsync(300);
  expect(logSize()).toBe(primedLogSize);
  const primedHeader = readFileSync(`${store.databasePath}-wal`).subarray(0, 32);
  await vi.advanceTimersByTimeAsync(600);
  expect(readFileSync(`${store.databasePath}-wal`).subarray(0, 32)).toEqual(primedHeader);
  expect(await store.readEvents(sessionId, { afterSeq: 0, limit: 10 })).toHaveLength(2);
});

it('primes the log as it opens a store whose log closing emptied', async () => {
  await store.commit(sampleUnit(1, 1));
  await store.close();
  store = await openSqliteStore({ dataDir: path.join(directory.path, 'data') });
  expect(logSize()).toBe(primedLogSize);
  const header = readFileSync(`${store.databasePath}-wal`).subarray(0, 32);
  await store.commit(sampleUnit(2, 2));
  expect(readFileSync(`${store.databasePath}-wal`).subarray(0, 32)).toEqual(header);
});
