import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { makeTemporaryDirectory } from './__fixtures__/temporary-directory.js';
import { messageDeltas, sampleUnit, sessionId } from './__fixtures__/sample-records.js';
import { openSqliteStore, type SqliteStore } from './index.js';

let directory: Awaited<ReturnType<typeof makeTemporaryDirectory>>;
let store: SqliteStore;
beforeEach(async () => {
  directory = await makeTemporaryDirectory();
  store = await openSqliteStore({ dataDir: path.join(directory.path, 'data') });
});
afterEach(async () => {
  await store.close();
  await directory.remove();
});

// Throughput is measured by bench/store-throughput.mjs; this only proves the batched path is whole.
it('stores 20 batches of 100 events, all readable in order', async () => {
  const batchSize = 100;
  for (let batch = 0; batch < 20; batch += 1) {
    await store.commit(sampleUnit(batch * batchSize + 1, (batch + 1) * batchSize));
  }
  const read = [];
  for (let afterSeq = 0; ; ) {
    const page = await store.readEvents(sessionId, { afterSeq, limit: 500 });
    if (page.length === 0) break;
    read.push(...page);
    afterSeq = page.at(-1)!.seq;
  }
  expect(read).toEqual(messageDeltas(1, 2000));
  expect((await store.getSession(sessionId))?.lastSeq).toBe(2000);
});
