import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { AgentError, type EventBody, type RunOutcome } from '@tether/protocol';
import { createAgentRuntime } from '@tether/runtime';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createMockProvider } from '../../testkit/src/mock-provider.js';
import { createDatabaseAtVersion } from './__fixtures__/legacy-database.js';
import { makeTemporaryDirectory } from './__fixtures__/temporary-directory.js';
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

const minute = (value: number) => `2025-01-02T03:${String(value).padStart(2, '0')}:00.000Z`;
const titledId = `ses_${'a'.repeat(32)}`;
const redactedId = `ses_${'b'.repeat(32)}`;
const newId = `ses_${'c'.repeat(32)}`;
const runIds = [1, 2, 3, 4].map((digit) => `run_${String(digit).repeat(32)}`) as [string, string, string, string];
const text = (...parts: string[]) => parts.map((part) => ({ type: 'text' as const, text: part }));
const opened: EventBody = { type: 'session.opened', provider: 'claude', workspace: { kind: 'directory', path: '/work/project' }, configuration: {}, ephemeral: false, reopened: false };

interface LegacyRun {
  readonly runId: string;
  readonly outcome: RunOutcome;
  readonly startedAt: string;
  readonly completedAt: string;
}

interface LegacySession {
  readonly sessionId: string;
  readonly redactInput: boolean;
  readonly createdAt: string;
  /** Each event with the minute it was recorded at. */
  readonly events: readonly (readonly [EventBody, number])[];
  readonly runs: readonly LegacyRun[];
}

const legacySessions: readonly LegacySession[] = [
  {
    // A control first (it names nothing), then two turns and a process release after the last run.
    sessionId: titledId,
    redactInput: false,
    createdAt: minute(1),
    events: [
      [opened, 1],
      [{ type: 'run.started', runId: runIds[0], input: text('/compact'), inputRedacted: false, control: { name: 'compact' } }, 2],
      [{ type: 'control.completed', runId: runIds[0], name: 'compact', status: 'succeeded', output: '' }, 2],
      [{ type: 'run.completed', runId: runIds[0], outcome: 'succeeded' }, 3],
      [{ type: 'run.started', runId: runIds[1], input: text('  Fix the\n\n build ', 'please'), inputRedacted: false }, 4],
      [{ type: 'run.message_delta', runId: runIds[1], blockId: 'block-1', text: 'On it.' }, 5],
      [{ type: 'run.completed', runId: runIds[1], outcome: 'failed', error: { code: 'provider_crashed', message: 'The agent process exited.', retryable: true } }, 6],
      [{ type: 'run.started', runId: runIds[2], input: text('Second turn'), inputRedacted: false }, 7],
      [{ type: 'run.completed', runId: runIds[2], outcome: 'interrupted' }, 8],
      [{ type: 'session.process_stopped', reason: 'idle' }, 9],
      [{ type: 'diagnostic', level: 'info', code: 'late.note' }, 10],
    ],
    runs: [
      { runId: runIds[0], outcome: 'succeeded', startedAt: minute(2), completedAt: minute(3) },
      { runId: runIds[1], outcome: 'failed', startedAt: minute(4), completedAt: minute(6) },
      { runId: runIds[2], outcome: 'interrupted', startedAt: minute(7), completedAt: minute(8) },
    ],
  },
  {
    sessionId: redactedId,
    redactInput: true,
    createdAt: minute(1),
    events: [
      [opened, 1],
      [{ type: 'run.started', runId: runIds[3], input: null, inputRedacted: true }, 2],
      [{ type: 'run.completed', runId: runIds[3], outcome: 'succeeded' }, 3],
    ],
    runs: [{ runId: runIds[3], outcome: 'succeeded', startedAt: minute(2), completedAt: minute(3) }],
  },
  { sessionId: newId, redactInput: false, createdAt: minute(5), events: [[opened, 5]], runs: [] },
];

/** Writes the sessions in the schema of version 3 (before titles, last runs and last activity). */
function writeVersion3Sessions(database: DatabaseSync): void {
  const insertSession = database.prepare(`
    INSERT INTO sessions (session_id, provider, workspace, configuration, ephemeral, redact_input, state, active_run_id, permission_mode, model, live_process, provider_session_id, usage, last_seq, created_at, updated_at)
    VALUES (?, 'claude', '{"kind":"directory","path":"/work/project"}', '{}', 0, ?, 'idle', NULL, NULL, NULL, NULL, NULL, ?, ?, ?, ?)`);
  const insertRun = database.prepare(`INSERT INTO runs (run_id, session_id, status, outcome, error, usage, started_at, completed_at) VALUES (?, ?, 'completed', ?, NULL, NULL, ?, ?)`);
  const insertEvent = database.prepare('INSERT INTO events (session_id, seq, type, run_id, at, data) VALUES (?, ?, ?, ?, ?, ?)');
  const usage = JSON.stringify({ inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheCreationTokens: 0, costUsd: null });
  for (const session of legacySessions) {
    const lastMinute = session.events.at(-1)![1];
    insertSession.run(session.sessionId, session.redactInput ? 1 : 0, usage, session.events.length, session.createdAt, minute(lastMinute));
    for (const run of session.runs) insertRun.run(run.runId, session.sessionId, run.outcome, run.startedAt, run.completedAt);
    session.events.forEach(([body, at], index) => {
      const event = { ...body, sessionId: session.sessionId, seq: index + 1, at: minute(at) };
      insertEvent.run(session.sessionId, event.seq, event.type, 'runId' in body ? (body.runId ?? null) : null, event.at, JSON.stringify(event));
    });
  }
}

const expectedSummaries = {
  [titledId]: { title: 'Fix the build please', lastRun: { runId: runIds[2], outcome: 'interrupted', completedAt: minute(8) }, lastActivityAt: minute(8) },
  [redactedId]: { title: null, lastRun: { runId: runIds[3], outcome: 'succeeded', completedAt: minute(3) }, lastActivityAt: minute(3) },
  [newId]: { title: null, lastRun: null, lastActivityAt: minute(5) },
};

function schemaOf(): { version: number; columns: string[] } {
  const database = new DatabaseSync(path.join(dataDir, 'tether.db'), { readOnly: true });
  try {
    const version = Number(database.prepare('SELECT max(version) AS version FROM schema_migrations').get()!['version']);
    const columns = database.prepare('SELECT name FROM pragma_table_info(?)').all('sessions').map((row) => String(row['name']));
    return { version, columns };
  } finally {
    database.close();
  }
}

describe('migration 4 (session summary) on a version 3 database', () => {
  it('backfills each session title, last run and last activity from its events and runs', async () => {
    createDatabaseAtVersion(dataDir, 3, writeVersion3Sessions);

    const store = await openSqliteStore({ dataDir });
    const stored = await store.loadSessions();
    expect(Object.fromEntries(stored.map(({ sessionId, title, lastRun, lastActivityAt }) => [sessionId, { title, lastRun, lastActivityAt }]))).toEqual(expectedSummaries);

    // The runtime's snapshots show them as stored, and it keeps them up to date from there.
    const runtime = await createAgentRuntime({ providers: [createMockProvider({ name: 'claude' })], store });
    const listed = await runtime.listSessions();
    expect(listed).toHaveLength(legacySessions.length);
    for (const snapshot of listed) expect(snapshot).toMatchObject(expectedSummaries[snapshot.sessionId]!);
    const { runId } = await runtime.submitTurn({ sessionId: newId, input: [{ type: 'text', text: 'A first turn after the upgrade' }] });
    const run = await runtime.waitForRun(runId);
    await runtime.shutdown();

    const reopened = await openSqliteStore({ dataDir });
    try {
      expect(await reopened.getSession(newId)).toMatchObject({ title: 'A first turn after the upgrade', lastRun: { runId, outcome: 'succeeded', completedAt: run.completedAt } });
      expect(await reopened.getSession(titledId)).toMatchObject(expectedSummaries[titledId]!);
    } finally {
      await reopened.close();
    }
  });

  it('leaves the database at version 3, columns and all, when the backfill fails, and upgrades it on the next open', async () => {
    createDatabaseAtVersion(dataDir, 3, (database) => {
      writeVersion3Sessions(database);
      // Stands in for a failure half-way through the backfill: the columns are added, then the first update aborts.
      database.exec(`CREATE TRIGGER refuse_session_updates BEFORE UPDATE ON sessions BEGIN SELECT RAISE(ABORT, 'refused for the test'); END`);
    });

    const error = await openSqliteStore({ dataDir }).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(AgentError.isInstance(error) && error.code).toBe('store_failure');
    const before = schemaOf();
    expect(before.version).toBe(3);
    expect(before.columns).not.toContain('title');
    expect(before.columns).not.toContain('last_activity_at');

    const database = new DatabaseSync(path.join(dataDir, 'tether.db'));
    database.exec('DROP TRIGGER refuse_session_updates');
    database.close();
    const store = await openSqliteStore({ dataDir });
    try {
      expect(await store.getSession(titledId)).toMatchObject(expectedSummaries[titledId]!);
    } finally {
      await store.close();
    }
    expect(schemaOf().version).toBe(4);
  });
});
