import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createDatabaseAtVersion } from './__fixtures__/legacy-database.js';
import { makeTemporaryDirectory } from './__fixtures__/temporary-directory.js';
import { legacySessions, newId, redactedId, titledId } from './__fixtures__/version-3-sessions.js';
import { writeVersion3Sessions } from './__fixtures__/version-3-sessions.js';
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

/** What SQLite plans for a statement, as EXPLAIN QUERY PLAN details. */
function queryPlan(sql: string): string {
  const database = new DatabaseSync(path.join(dataDir, 'tether.db'), { readOnly: true });
  try {
    return database
      .prepare(`EXPLAIN QUERY PLAN ${sql}`)
      .all()
      .map((row) => String(row['detail']))
      .join('; ');
  } finally {
    database.close();
  }
}

describe('session listing over SQLite', () => {
  it('upgrades a version 4 database holding sessions, which then list newest first and count by state', async () => {
    createDatabaseAtVersion(dataDir, 4, writeVersion3Sessions);
    const store = await openSqliteStore({ dataDir });
    try {
      // titledId and redactedId share a createdAt: the id breaks the tie, descending.
      expect((await store.listSessions({ limit: 10 })).map((session) => session.sessionId)).toEqual([newId, redactedId, titledId]);
      expect(await store.countSessionsByState()).toEqual({ idle: legacySessions.length, running: 0, waiting: 0, closed: 0 });
      expect((await store.loadOpenSessions()).map((session) => session.sessionId)).toEqual([titledId, redactedId, newId].sort());
    } finally {
      await store.close();
    }
  });

  it('reads pages, counts and the start-up sessions through indexes, never a scan of the sessions table', async () => {
    await (await openSqliteStore({ dataDir })).close();
    const plans = [
      queryPlan(`SELECT session_id FROM sessions WHERE state = 'closed' AND (created_at, session_id) < ('x', 'y') ORDER BY created_at DESC, session_id DESC LIMIT 5`),
      queryPlan(`SELECT session_id FROM sessions WHERE (created_at, session_id) < ('x', 'y') ORDER BY created_at DESC, session_id DESC LIMIT 5`),
      queryPlan(`SELECT session_id FROM sessions WHERE state <> 'closed' OR live_process IS NOT NULL ORDER BY session_id`),
      queryPlan('SELECT state, count(*) AS count FROM sessions GROUP BY state'),
    ];
    expect(plans[0]).toContain('sessions_by_state_newest_first');
    expect(plans[1]).toContain('sessions_newest_first');
    expect(plans[2]).toContain('sessions_loaded_at_start');
    expect(plans[3]).toContain('COVERING INDEX sessions_by_state_newest_first');
    for (const plan of plans) expect(plan).not.toMatch(/SCAN sessions(?! USING)/);
    for (const plan of plans) expect(plan).not.toContain('TEMP B-TREE');
  });
});
