import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import type { CommitUnit } from '@tether/runtime';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createAgentRuntime } from '@tether/runtime';
import { agentErrorOf, createMockProvider, sampleApprovalRequest } from '@tether/testkit';
import { createDatabaseAtVersion } from './__fixtures__/legacy-database.js';
import { makeTemporaryDirectory } from './__fixtures__/temporary-directory.js';
import { messageDeltas, runId, sampleUnit, sessionId, sessionRecord } from './__fixtures__/sample-records.js';
import {
  expectedSummaries,
  legacySessions,
  newId,
  redactedId,
  titledId,
  writeVersion3Sessions,
} from './__fixtures__/version-3-sessions.js';
import { openSqliteStore } from './index.js';
import { latestSchemaVersion } from './migrations/migrations.js';
import { columnOf, sessionParameters } from './record-rows.js';
import { prepareStatements } from './store-statements.js';

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

/** The schema version the database records, and the columns of its sessions table. */
function readSchema(): { version: number; sessionColumns: string[] } {
  const database = new DatabaseSync(path.join(dataDir, 'tether.db'), { readOnly: true });
  try {
    const version = Number(database.prepare('SELECT max(version) AS version FROM schema_migrations').get()!['version']);
    const sessionColumns = database
      .prepare('SELECT name FROM pragma_table_info(?)')
      .all('sessions')
      .map((row) => String(row['name']));
    return { version, sessionColumns };
  } finally {
    database.close();
  }
}

const at = '2025-01-02T03:04:05.000Z';
const interactionRef = `int_${'3'.repeat(32)}`;

function pendingApproval(): CommitUnit['interactions'][number] {
  return {
    interactionRef,
    sessionId,
    runId,
    status: 'pending',
    request: sampleApprovalRequest({ offerSessionApproval: true, defaultToNo: false }),
    requestedAt: at,
    settledAt: null,
  };
}

/** A unit with events `from`..`to` that also raises (or re-commits) the pending approval. */
function unitWithInteraction(from: number, to: number): CommitUnit {
  return {
    ...sampleUnit(from, to),
    sessions: [{ ...sessionRecord(to), state: 'waiting', permissionMode: 'auto_edit' }],
    interactions: [pendingApproval()],
  };
}

describe('a reopened store', () => {
  it('holds everything committed before it was closed, and continues the sequence', async () => {
    const first = await openSqliteStore({ dataDir });
    await first.commit(unitWithInteraction(1, 3));
    await first.close();

    const second = await openSqliteStore({ dataDir });
    try {
      expect(second.kind).toBe('sqlite');
      expect(second.databasePath).toBe(path.join(dataDir, 'tether.db'));
      expect(await second.loadSessions()).toEqual(unitWithInteraction(1, 3).sessions);
      expect(await second.listRuns(sessionId)).toEqual(sampleUnit(1, 3).runs);
      expect(await second.getRun(runId)).toEqual(sampleUnit(1, 3).runs[0]);
      expect(await second.findReceipt('cmd-1')).toEqual(sampleUnit(1, 3).receipts[0]);
      expect(await second.listInteractions(sessionId, { openOnly: true })).toEqual([pendingApproval()]);
      expect(await second.getInteraction(sessionId, interactionRef)).toEqual(pendingApproval());
      expect(await second.readEvents(sessionId, { afterSeq: 0, limit: 10 })).toEqual(messageDeltas(1, 3));

      expect((await agentErrorOf(second.commit(sampleUnit(3, 3)))).details?.reason).toBe('sequence_conflict');
      await second.commit(sampleUnit(4, 5));
      expect((await second.getSession(sessionId))?.lastSeq).toBe(5);
    } finally {
      await second.close();
    }
  });
});

describe('blobs on disk', () => {
  /** How many blobs (bytes) and blob references the database holds. */
  function countBlobRows(): { blobs: number; references: number } {
    const database = new DatabaseSync(path.join(dataDir, 'tether.db'), { readOnly: true });
    try {
      const count = (table: string) =>
        Number(database.prepare(`SELECT count(*) AS count FROM ${table}`).get()!['count']);
      return { blobs: count('blobs'), references: count('blob_references') };
    } finally {
      database.close();
    }
  }

  it('keeps one copy of bytes two sessions refer to, across a reopen, and none once both are deleted', async () => {
    const bytes = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0, 255, 7]);
    const sha256 = 'f'.repeat(64);
    const otherSessionId = `ses_${'9'.repeat(32)}`;
    const first = await openSqliteStore({ dataDir });
    await first.commit({ ...sampleUnit(1, 1), blobs: [{ sha256, mediaType: 'image/png', bytes, sessionId }] });
    await first.commit({
      events: [],
      sessions: [{ ...sessionRecord(0), sessionId: otherSessionId }],
      runs: [],
      interactions: [],
      receipts: [],
      blobs: [{ sha256, mediaType: 'image/png', bytes, sessionId: otherSessionId }],
    });
    await first.close();
    expect(countBlobRows()).toEqual({ blobs: 1, references: 2 });

    const second = await openSqliteStore({ dataDir });
    try {
      expect(await second.readBlob(sessionId, sha256)).toEqual({ mediaType: 'image/png', bytes });
      await second.deleteSession(sessionId);
      expect(await second.readBlob(otherSessionId, sha256)).toEqual({ mediaType: 'image/png', bytes });
      await second.deleteSession(otherSessionId);
    } finally {
      await second.close();
    }
    expect(countBlobRows()).toEqual({ blobs: 0, references: 0 });
  });
});

describe('a deleted session', () => {
  it('leaves no trace of its text in the database file or its log, once the store has closed', async () => {
    const secret = 'HUNTER2-DELETE-ME-4711';
    const runtime = await createAgentRuntime({
      providers: [createMockProvider()],
      store: await openSqliteStore({ dataDir }),
    });
    const { sessionId: deleted } = await runtime.openSession({ workspace: { kind: 'directory', path: dataDir } });
    const { runId: ran } = await runtime.submitTurn({
      sessionId: deleted,
      input: [{ type: 'text', text: `my password is ${secret}` }],
    });
    await runtime.waitForRun(ran);
    await runtime.closeSession({ sessionId: deleted });
    await runtime.deleteSession(deleted);
    await runtime.shutdown();
    for (const file of ['tether.db', 'tether.db-wal']) {
      const bytes = existsSync(path.join(dataDir, file)) ? readFileSync(path.join(dataDir, file)) : Buffer.alloc(0);
      expect(bytes.includes(secret), file).toBe(false);
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
    expect(recorded.map((row) => [row['version'], row['name']])).toEqual([
      [1, 'initial'],
      [2, 'interactions'],
      [3, 'session-model-and-process'],
      [4, 'session-summary'],
      [5, 'session-listing-indexes'],
      [6, 'blobs-forks-and-checkpoints'],
      [7, 'session-workspace-status'],
      [8, 'session-follow-ups-and-limits'],
      [9, 'fewer-pages-a-commit'],
      [10, 'log-primer'],
    ]);

    await (await openSqliteStore({ dataDir })).close();
    expect(readMigrations()).toEqual(recorded);
  });

  it('bring a version 1 database holding data up to date, its sessions with no permission mode yet', async () => {
    // As the first release left it: a session, its run and events.
    createDatabaseAtVersion(dataDir, 1, (legacy) => {
      const v1Session = sessionRecord(2);
      legacy
        .prepare(
          `INSERT INTO sessions (session_id, provider, workspace, configuration, ephemeral, redact_input, state, active_run_id, provider_session_id, usage, last_seq, created_at, updated_at)
           VALUES (?, ?, ?, ?, 0, 0, ?, ?, NULL, ?, 2, ?, ?)`,
        )
        .run(
          sessionId,
          v1Session.provider,
          JSON.stringify(v1Session.workspace),
          JSON.stringify(v1Session.configuration),
          v1Session.state,
          runId,
          JSON.stringify(v1Session.usage),
          at,
          at,
        );
      legacy
        .prepare(`INSERT INTO runs (run_id, session_id, status, started_at) VALUES (?, ?, 'running', ?)`)
        .run(runId, sessionId, at);
      const insertEvent = legacy.prepare(
        'INSERT INTO events (session_id, seq, type, run_id, at, data) VALUES (?, ?, ?, ?, ?, ?)',
      );
      for (const event of messageDeltas(1, 2))
        insertEvent.run(sessionId, event.seq, event.type, runId, at, JSON.stringify(event));
    });

    const store = await openSqliteStore({ dataDir });
    try {
      expect(await store.loadSessions()).toEqual([sessionRecord(2)]);
      expect((await store.getSession(sessionId))?.permissionMode).toBeNull();
      expect(await store.listRuns(sessionId)).toEqual(sampleUnit(1, 2).runs);
      expect(await store.readEvents(sessionId, { afterSeq: 0, limit: 10 })).toEqual(messageDeltas(1, 2));
      expect(await store.listInteractions(sessionId)).toEqual([]);

      await store.commit(unitWithInteraction(3, 4));
      expect(await store.getSession(sessionId)).toEqual(unitWithInteraction(3, 4).sessions[0]);
      expect(await store.listInteractions(sessionId)).toEqual([pendingApproval()]);
    } finally {
      await store.close();
    }
  });

  it('bring a version 3 database up to date, backfilling each session title, last run and last activity from its events and runs', async () => {
    createDatabaseAtVersion(dataDir, 3, writeVersion3Sessions);

    const store = await openSqliteStore({ dataDir });
    const stored = await store.loadSessions();
    expect(
      Object.fromEntries(
        stored.map(({ sessionId, title, lastRun, lastActivityAt }) => [sessionId, { title, lastRun, lastActivityAt }]),
      ),
    ).toEqual(expectedSummaries);

    // The runtime's snapshots show them as stored, and it keeps them up to date from there.
    const runtime = await createAgentRuntime({ providers: [createMockProvider({ name: 'claude' })], store });
    const listed = await runtime.listSessions();
    expect(listed).toHaveLength(legacySessions.length);
    for (const snapshot of listed) expect(snapshot).toMatchObject(expectedSummaries[snapshot.sessionId]!);
    const { runId } = await runtime.submitTurn({
      sessionId: newId,
      input: [{ type: 'text', text: 'A first turn after the upgrade' }],
    });
    const run = await runtime.waitForRun(runId);
    await runtime.shutdown();

    const reopened = await openSqliteStore({ dataDir });
    try {
      expect(await reopened.getSession(newId)).toMatchObject({
        title: 'A first turn after the upgrade',
        lastRun: { runId, outcome: 'succeeded', completedAt: run.completedAt },
      });
      expect(await reopened.getSession(titledId)).toMatchObject(expectedSummaries[titledId]!);
    } finally {
      await reopened.close();
    }
  });

  it('leave a version 3 database as it was, columns and all, when the backfill fails, and upgrade it on the next open', async () => {
    createDatabaseAtVersion(dataDir, 3, (database) => {
      writeVersion3Sessions(database);
      // Stands in for a failure half-way through the backfill: the columns are added, then the first update aborts.
      database.exec(
        `CREATE TRIGGER refuse_session_updates BEFORE UPDATE ON sessions BEGIN SELECT RAISE(ABORT, 'refused for the test'); END`,
      );
    });

    expect((await agentErrorOf(openSqliteStore({ dataDir }))).code).toBe('store_failure');
    const before = readSchema();
    expect(before.version).toBe(3);
    expect(before.sessionColumns).not.toContain('title');
    expect(before.sessionColumns).not.toContain('last_activity_at');

    editDatabase('DROP TRIGGER refuse_session_updates');
    const store = await openSqliteStore({ dataDir });
    try {
      expect(await store.getSession(titledId)).toMatchObject(expectedSummaries[titledId]!);
    } finally {
      await store.close();
    }
    expect(readSchema().version).toBe(latestSchemaVersion);
  });

  it('bring a version 6 database up to date, its sessions read back with no workspace status (not tracked)', async () => {
    createDatabaseAtVersion(dataDir, 6, writeVersion3Sessions);
    const store = await openSqliteStore({ dataDir });
    try {
      const sessions = await store.loadOpenSessions();
      expect(sessions).toHaveLength(legacySessions.length);
      for (const session of sessions) expect(session.workspaceStatus).toBeNull();
    } finally {
      await store.close();
    }
    expect(readSchema().sessionColumns).toContain('workspace_status');
  });

  it('bring a version 8 database up to date, its events, receipts and start-up sessions read back from the rebuilt tables', async () => {
    const open = { ...sessionRecord(3), sessionId: `ses_${'b'.repeat(32)}` };
    const crashed = {
      ...sessionRecord(0),
      sessionId: `ses_${'a'.repeat(32)}`,
      state: 'closed' as const,
      activeRunId: null,
      liveProcess: { pid: 4242, startTime: 77, marker: 'f'.repeat(32) },
    };
    const closed = {
      ...sessionRecord(0),
      sessionId: `ses_${'c'.repeat(32)}`,
      state: 'closed' as const,
      activeRunId: null,
    };
    const earlier = sampleUnit(1, 3);
    createDatabaseAtVersion(dataDir, 8, (legacy) => {
      for (const session of [closed, open, crashed]) {
        const parameters = sessionParameters(session);
        const names = Object.keys(parameters);
        legacy
          .prepare(
            `INSERT INTO sessions (${names.map(columnOf).join(', ')}) VALUES (${names.map((name) => `$${name}`).join(', ')})`,
          )
          .run(parameters);
      }
      const insertEvent = legacy.prepare(
        'INSERT INTO events (session_id, seq, type, run_id, at, data) VALUES (?, ?, ?, ?, ?, ?)',
      );
      for (const event of earlier.events)
        insertEvent.run(
          open.sessionId,
          event.seq,
          event.type,
          runId,
          at,
          JSON.stringify({ ...event, sessionId: open.sessionId }),
        );
      const [receipt] = earlier.receipts;
      legacy
        .prepare('INSERT INTO receipts (command_id, fingerprint, receipt, at) VALUES (?, ?, ?, ?)')
        .run(receipt!.commandId, receipt!.fingerprint, JSON.stringify(receipt!.receipt), receipt!.at);
    });

    const store = await openSqliteStore({ dataDir });
    try {
      expect((await store.loadOpenSessions()).map((session) => session.sessionId)).toEqual([
        crashed.sessionId,
        open.sessionId,
      ]);
      expect(await store.readEvents(open.sessionId, { afterSeq: 1, limit: 10 })).toEqual(
        earlier.events.slice(1).map((event) => ({ ...event, sessionId: open.sessionId })),
      );
      expect(await store.findReceipt('cmd-1')).toEqual(earlier.receipts[0]);
      // The log goes on where it was; a receipt committed again is refused with all of its unit, the stored one kept.
      const next = sampleUnit(4, 5);
      const continued = {
        ...next,
        events: next.events.map((event) => ({ ...event, sessionId: open.sessionId })),
        sessions: [{ ...next.sessions[0]!, sessionId: open.sessionId }],
      };
      const again = await agentErrorOf(
        store.commit({ ...continued, receipts: [{ ...earlier.receipts[0]!, fingerprint: 'again' }] }),
      );
      expect(again).toMatchObject({ code: 'store_failure', details: { reason: 'receipt_exists' } });
      expect((await store.readEvents(open.sessionId, { afterSeq: 0, limit: 10 })).map((event) => event.seq)).toEqual([
        1, 2, 3,
      ]);
      await store.commit(continued);
      expect((await store.readEvents(open.sessionId, { afterSeq: 0, limit: 10 })).map((event) => event.seq)).toEqual([
        1, 2, 3, 4, 5,
      ]);
      expect(await store.findReceipt('cmd-1')).toEqual(earlier.receipts[0]);
    } finally {
      await store.close();
    }
  });

  it('refuse a database from a newer Tether, with a message saying to upgrade', async () => {
    await (await openSqliteStore({ dataDir })).close();
    editDatabase(
      `INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, 'from-the-future', '2030-01-01T00:00:00.000Z')`,
    );

    const error = await agentErrorOf(openSqliteStore({ dataDir }));
    expect(error.code).toBe('store_failure');
    expect(error.details?.reason).toBe('schema_too_new');
    expect(error.message).toMatch(/schema version 999.*Upgrade Tether/);
    expect(existsSync(path.join(dataDir, 'tether.lock')), 'the failed open let go of the lock').toBe(false);

    editDatabase('DELETE FROM schema_migrations WHERE version = 999');
    await (await openSqliteStore({ dataDir })).close();
  });
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

/** The SQL of one of the store's own statements, as it prepares it. */
function storeStatementText(name: 'selectOpenSessions'): string {
  const database = new DatabaseSync(path.join(dataDir, 'tether.db'), { readOnly: true });
  try {
    return prepareStatements(database)[name].sourceSQL;
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
      expect((await store.listSessions({ limit: 10 })).map((session) => session.sessionId)).toEqual([
        newId,
        redactedId,
        titledId,
      ]);
      expect(await store.countSessionsByState()).toEqual({
        idle: legacySessions.length,
        running: 0,
        waiting: 0,
        closed: 0,
      });
      expect((await store.loadOpenSessions()).map((session) => session.sessionId)).toEqual(
        [titledId, redactedId, newId].sort(),
      );
    } finally {
      await store.close();
    }
  });

  it('reads pages, counts and the start-up sessions through indexes, never a scan of the sessions table', async () => {
    await (await openSqliteStore({ dataDir })).close();
    const plans = [
      queryPlan(
        `SELECT session_id FROM sessions WHERE state = 'closed' AND (created_at, session_id) < ('x', 'y') ORDER BY created_at DESC, session_id DESC LIMIT 5`,
      ),
      queryPlan(
        `SELECT session_id FROM sessions WHERE (created_at, session_id) < ('x', 'y') ORDER BY created_at DESC, session_id DESC LIMIT 5`,
      ),
      queryPlan(storeStatementText('selectOpenSessions')),
      queryPlan('SELECT state, count(*) AS count FROM sessions GROUP BY state'),
    ];
    expect(plans[0]).toContain('sessions_by_state_newest_first');
    expect(plans[1]).toContain('sessions_newest_first');
    expect(plans[2]).toMatch(
      /sessions_by_state_newest_first \(state<\?\).*sessions_by_state_newest_first \(state>\?\)/,
    );
    expect(plans[2]).toContain('SCAN sessions USING INDEX sessions_with_live_process');
    expect(plans[3]).toContain('COVERING INDEX sessions_by_state_newest_first');
    for (const plan of plans) expect(plan).not.toMatch(/SCAN sessions(?! USING)/);
    // Only the start-up read sorts: the open sessions, once.
    for (const plan of [plans[0], plans[1], plans[3]]) expect(plan).not.toContain('TEMP B-TREE');
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
        const error = await agentErrorOf(reopened.readEvents(sessionId, { afterSeq, limit: 1 }));
        expect(error.code).toBe('store_failure');
        expect(error.details?.reason).toBe('corrupted_row');
      }
      expect((await agentErrorOf(reopened.loadSessions())).details?.reason).toBe('corrupted_row');
      expect((await agentErrorOf(reopened.getSession(sessionId))).code).toBe('store_failure');
    } finally {
      await reopened.close();
    }
  });

  for (const [description, request] of [
    ['not JSON', `'{"kind": "approval"'`],
    ['not an object', `'["approval"]'`],
    ['of no known kind', `'{"kind": "telepathy"}'`],
    ['without a kind', `'{}'`],
  ] as const) {
    it(`are reported for an interaction whose request is ${description}`, async () => {
      const store = await openSqliteStore({ dataDir });
      await store.commit(unitWithInteraction(1, 1));
      await store.close();
      editDatabase(`UPDATE interactions SET request = ${request}`);

      const reopened = await openSqliteStore({ dataDir });
      try {
        for (const read of [
          reopened.listInteractions(sessionId),
          reopened.listInteractions(sessionId, { openOnly: true }),
          reopened.getInteraction(sessionId, interactionRef),
        ]) {
          const error = await agentErrorOf(read);
          expect(error.code).toBe('store_failure');
          expect(error.details?.reason).toBe('corrupted_row');
        }
      } finally {
        await reopened.close();
      }
    });
  }
});

describe('a database file that is no database', () => {
  it('is refused as damaged (database_damaged), saying to move it aside or restore a backup, and left as it was', async () => {
    const first = await openSqliteStore({ dataDir });
    await first.close();
    const databasePath = path.join(dataDir, 'tether.db');
    writeFileSync(databasePath, 'this is not a SQLite database at all, only text, long enough to be read as a header');
    const error = await agentErrorOf(openSqliteStore({ dataDir }));
    expect(error).toMatchObject({ code: 'store_failure', retryable: false, details: { reason: 'database_damaged' } });
    expect(error.message).toContain('is damaged');
    expect(error.message).toContain('Move it and its -wal file aside');
    expect(readFileSync(databasePath, 'utf8')).toContain('not a SQLite database');
  });
});
