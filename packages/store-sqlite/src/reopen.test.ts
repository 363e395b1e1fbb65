import { existsSync } from 'node:fs';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { AgentError } from '@tether/protocol';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeTemporaryDirectory } from './__fixtures__/temporary-directory.js';
import { messageDeltas, runId, sampleUnit, sessionId } from './__fixtures__/sample-records.js';
import { openSqliteStore } from './index.js';

let directory: Awaited<ReturnType<typeof makeTemporaryDirectory>>;
let dataDir: string;
beforeEach(async () => {
  directory = await makeTemporaryDirectory();
  dataDir = path.join(directory.path, 'data');
});
afterEach(async () => {
  await directory.remove();
});

/** Edits the database behind the store's back, as a damaged disk or a newer Tether would. */
function editDatabase(sql: string): void {
  const database = new DatabaseSync(path.join(dataDir, 'tether.db'));
  try {
    database.exec(sql);
  } finally {
    database.close();
  }
}

async function rejection(promise: Promise<unknown>): Promise<AgentError> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(AgentError.isInstance(error), 'rejects with an AgentError').toBe(true);
  return error as AgentError;
}

describe('a reopened store', () => {
  it('holds everything committed before it was closed, and continues the sequence', async () => {
    const first = await openSqliteStore({ dataDir });
    await first.commit(sampleUnit(1, 3));
    await first.close();

    const second = await openSqliteStore({ dataDir });
    try {
      expect(second.kind).toBe('sqlite');
      expect(second.databasePath).toBe(path.join(dataDir, 'tether.db'));
      expect(await second.loadSessions()).toEqual(sampleUnit(1, 3).sessions);
      expect(await second.listRuns(sessionId)).toEqual(sampleUnit(1, 3).runs);
      expect(await second.getRun(runId)).toEqual(sampleUnit(1, 3).runs[0]);
      expect(await second.findReceipt('cmd-1')).toEqual(sampleUnit(1, 3).receipts[0]);
      expect(await second.readEvents(sessionId, { afterSeq: 0, limit: 10 })).toEqual(messageDeltas(1, 3));

      expect((await rejection(second.commit(sampleUnit(3, 3)))).details?.reason).toBe('sequence_conflict');
      await second.commit(sampleUnit(4, 5));
      expect((await second.getSession(sessionId))?.lastSeq).toBe(5);
    } finally {
      await second.close();
    }
  });
});

describe('migrations', () => {
  it('are applied and recorded once, not again on reopen', async () => {
    await (await openSqliteStore({ dataDir })).close();
    const readMigrations = () => {
      const database = new DatabaseSync(path.join(dataDir, 'tether.db'), { readOnly: true });
      try {
        return database.prepare('SELECT version, name, applied_at FROM schema_migrations ORDER BY version').all();
      } finally {
        database.close();
      }
    };
    const recorded = readMigrations();
    expect(recorded.map((row) => [row['version'], row['name']])).toEqual([[1, 'initial']]);

    await (await openSqliteStore({ dataDir })).close();
    expect(readMigrations()).toEqual(recorded);
  });

  it('refuse a database from a newer Tether, with a message saying to upgrade', async () => {
    await (await openSqliteStore({ dataDir })).close();
    editDatabase(`INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, 'from-the-future', '2030-01-01T00:00:00.000Z')`);

    const error = await rejection(openSqliteStore({ dataDir }));
    expect(error.code).toBe('store_failure');
    expect(error.details?.reason).toBe('schema_too_new');
    expect(error.message).toMatch(/schema version 999.*Upgrade Tether/);
    expect(existsSync(path.join(dataDir, 'tether.lock')), 'the failed open let go of the lock').toBe(false);

    editDatabase('DELETE FROM schema_migrations WHERE version = 999');
    await (await openSqliteStore({ dataDir })).close();
  });
});

describe('corrupted rows', () => {
  it('are reported as store_failure, not thrown as parse errors', async () => {
    const store = await openSqliteStore({ dataDir });
    await store.commit(sampleUnit(1, 4));
    await store.close();
    editDatabase(`
      UPDATE events SET data = 'not json' WHERE seq = 2;
      UPDATE events SET data = json_set(data, '$.seq', 7) WHERE seq = 3;
      UPDATE events SET data = '[1, 2]' WHERE seq = 4;
      UPDATE sessions SET usage = '{broken';
    `);

    const reopened = await openSqliteStore({ dataDir });
    try {
      expect(await reopened.readEvents(sessionId, { afterSeq: 0, limit: 1 })).toEqual(messageDeltas(1, 1));
      for (const afterSeq of [1, 2, 3]) {
        const error = await rejection(reopened.readEvents(sessionId, { afterSeq, limit: 1 }));
        expect(error.code).toBe('store_failure');
        expect(error.details?.reason).toBe('corrupted_row');
      }
      expect((await rejection(reopened.loadSessions())).details?.reason).toBe('corrupted_row');
      expect((await rejection(reopened.getSession(sessionId))).code).toBe('store_failure');
    } finally {
      await reopened.close();
    }
  });
});
