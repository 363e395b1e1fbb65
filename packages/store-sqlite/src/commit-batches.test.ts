import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { makeTemporaryDirectory } from './__fixtures__/temporary-directory.js';
import { messageDeltas, sampleUnit, sessionId, sessionRecord } from './__fixtures__/sample-records.js';
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

// A commit that moves only the session's progress (seq, times) writes those columns alone; the row
// must still read back as the last record committed, whatever changed in between or was refused.
it('reads back the last committed session record across progress-only, full and refused commits', async () => {
  const base = sampleUnit(1, 1);
  await store.commit(base);
  const progressed = { ...sessionRecord(2), lastActivityAt: '2025-01-02T03:04:06.000Z' };
  await store.commit({ ...base, events: messageDeltas(2, 2), sessions: [progressed], receipts: [] });
  expect(await store.getSession(sessionId)).toEqual(progressed);
  const renamed = {
    ...sessionRecord(3),
    title: 'Renamed',
    state: 'idle' as const,
    updatedAt: '2025-01-02T03:04:07.000Z',
  };
  await store.commit({ ...base, events: messageDeltas(3, 3), sessions: [renamed], receipts: [] });
  expect(await store.getSession(sessionId)).toEqual(renamed);
  // Refused (seq 5 does not follow 3): nothing of it is written, and the next commit starts from the stored row.
  const refused = { ...renamed, lastSeq: 5, title: 'Never stored' };
  await expect(
    store.commit({ ...base, events: messageDeltas(5, 5), sessions: [refused], receipts: [] }),
  ).rejects.toThrow();
  const after = { ...renamed, lastSeq: 4, lastActivityAt: '2025-01-02T03:04:08.000Z' };
  await store.commit({ ...base, events: messageDeltas(4, 4), sessions: [after], receipts: [] });
  expect(await store.getSession(sessionId)).toEqual(after);
});

// A commit writes only the columns whose fields changed (session-updates.ts): a run's end (state,
// last run, usage), a field that is gone, an object replaced. Each must read back as committed, in
// the listing by state too, and after the store is reopened (from the row, not from memory).
it('reads back a session whose commits changed a few fields each, in its listing and after a reopen', async () => {
  const base = sampleUnit(1, 1);
  const withLimits = {
    ...sessionRecord(1),
    limits: {
      available: false,
      unavailableReason: 'api_key_account',
      windows: [],
      reportedAt: '2025-01-02T03:04:05.500Z',
    },
  };
  await store.commit({ ...base, sessions: [withLimits] });
  const ended = {
    ...withLimits,
    lastSeq: 2,
    state: 'idle' as const,
    activeRunId: null,
    lastRun: { runId: base.runs[0]!.runId, outcome: 'succeeded' as const, completedAt: '2025-01-02T03:04:06.000Z' },
    usage: { ...withLimits.usage, inputTokens: 10, outputTokens: 5 },
    updatedAt: '2025-01-02T03:04:06.000Z',
  };
  await store.commit({ ...base, events: messageDeltas(2, 2), sessions: [ended], receipts: [] });
  expect(await store.getSession(sessionId)).toEqual(ended);
  expect(await store.listSessions({ limit: 10, state: 'idle' })).toEqual([ended]);
  expect(await store.listSessions({ limit: 10, state: 'running' })).toEqual([]);
  const { limits: _limits, ...withoutLimits } = ended;
  const moved = {
    ...withoutLimits,
    lastSeq: 3,
    workspace: { kind: 'directory' as const, path: '/work/other' },
    title: 'Moved',
  };
  await store.commit({ ...base, events: messageDeltas(3, 3), sessions: [moved], receipts: [] });
  const expected = moved;
  expect(await store.getSession(sessionId)).toEqual(expected);
  await store.close();
  store = await openSqliteStore({ dataDir: path.join(directory.path, 'data') });
  expect(await store.getSession(sessionId)).toEqual(expected);
  expect(await store.countSessionsByState()).toEqual({ idle: 1, running: 0, waiting: 0, closed: 0 });
});

// What the store remembers of the sessions it wrote is bounded (a long-running daemon writes many);
// a session it forgot is read from the database again, and checked as strictly.
it('keeps checking and writing a session it has forgotten after many others were written', async () => {
  const base = sampleUnit(1, 1);
  await store.commit(base);
  for (let index = 0; index < 1_001; index += 1) {
    const other = `ses_${index.toString(16).padStart(32, '0')}`;
    await store.commit({
      ...base,
      events: messageDeltas(1, 1).map((event) => ({ ...event, sessionId: other })),
      sessions: [{ ...sessionRecord(1), sessionId: other }],
      receipts: [],
    });
  }
  await expect(
    store.commit({ ...base, events: messageDeltas(3, 3), sessions: [sessionRecord(3)], receipts: [] }),
  ).rejects.toMatchObject({ code: 'store_failure', details: { reason: 'sequence_conflict' } });
  const progressed = { ...sessionRecord(2), lastActivityAt: '2025-01-02T03:04:09.000Z' };
  await store.commit({ ...base, events: messageDeltas(2, 2), sessions: [progressed], receipts: [] });
  expect(await store.getSession(sessionId)).toEqual(progressed);
});
