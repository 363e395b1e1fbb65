import type { TetherStore } from '@tether/runtime';
import { agentErrorOf, sampleSessionRecord } from '@tether/testkit';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { diagnosticEvents, query, seqs, unitOf, useStores, waitingForLocks } from './__fixtures__/database-fixtures.js';
import { useTestServer } from './__fixtures__/test-server.js';
import { openPostgresStore } from './index.js';
import { initialMigration } from './migrations/0001-initial.js';

// Several stores (each its own pool, as several daemons would have) on one database of a real server.
// They share one owner id (as a daemon and its restarted self do), so the leases let them all write the
// same session and what is tested is the database's append check itself.
const server = useTestServer();
const ownerId = 'shared-owner';

const openShared = useStores();
const openStore = (url: string) => openShared({ url, maxConnections: 2, ownerId });

const sessionId = `ses_${'a'.repeat(32)}`;
const at = '2026-12-01T00:00:00.000Z';

/** Events from..to of the session, each naming the writer that made it. */
const eventsBy = (writer: string, from: number, to: number) => diagnosticEvents(sessionId, from, to, writer);

function oneTo(last: number): number[] {
  return Array.from({ length: last }, (_, index) => index + 1);
}

describe('PostgreSQL store: writers sharing a database', () => {
  it('of two pools appending from the same seq, stores exactly one and refuses the other with sequence_conflict', async () => {
    const url = await server().createDatabase();
    const [first, second] = await Promise.all([openStore(url), openStore(url)]);
    for (let round = 0; round < 10; round += 1) {
      const from = round * 3 + 1;
      const outcomes = await Promise.allSettled([
        first.commit(unitOf(eventsBy('first', from, from + 2))),
        second.commit(unitOf(eventsBy('second', from, from + 2))),
      ]);
      expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
      const refused = outcomes.find((outcome) => outcome.status === 'rejected');
      expect(refused?.reason).toMatchObject({ code: 'store_failure', details: { reason: 'sequence_conflict' } });
    }
    const stored = await second.readEvents(sessionId, { afterSeq: 0, limit: 100 });
    expect(seqs(stored)).toEqual(oneTo(30));
    // Each unit landed whole: a round's three events come from one writer.
    for (let round = 0; round < 10; round += 1) {
      const writers = new Set(stored.slice(round * 3, round * 3 + 3).map((event) => (event as { code: string }).code));
      expect(writers.size).toBe(1);
    }
  });

  it('wakes two writers held on the same session together, and lets only one of them append', async () => {
    const url = await server().createDatabase();
    const [first, second] = await Promise.all([openStore(url), openStore(url)]);
    await first.commit(unitOf(eventsBy('first', 1, 2)));
    // A transaction holding the session's head makes both writers wait inside theirs, having read the same head.
    const holder = new pg.Client({ connectionString: url });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT last_seq FROM event_heads WHERE session_id = $1 FOR UPDATE', [sessionId]);
      const racing = Promise.allSettled([
        first.commit(unitOf(eventsBy('first', 3, 4))),
        second.commit(unitOf(eventsBy('second', 3, 5))),
      ]);
      await expect.poll(async () => (await waitingForLocks(url)).length, { timeout: 10_000, interval: 20 }).toBe(2);
      await holder.query('COMMIT');
      const outcomes = await racing;
      expect(outcomes.map((outcome) => outcome.status).sort()).toEqual(['fulfilled', 'rejected']);
      const refused = outcomes.find((outcome) => outcome.status === 'rejected');
      expect(refused?.reason).toMatchObject({ code: 'store_failure', details: { reason: 'sequence_conflict' } });
      const winner = outcomes[0]!.status === 'fulfilled' ? 4 : 5;
      expect(seqs(await first.readEvents(sessionId, { afterSeq: 0, limit: 100 }))).toEqual(oneTo(winner));
    } finally {
      await holder.end();
    }
  });

  it('leaves no gap and no duplicate when two pools keep appending, each catching up after a refusal', async () => {
    const url = await server().createDatabase();
    const writers = await Promise.all([openStore(url), openStore(url)]);
    async function append(store: TetherStore, name: string, units: number): Promise<void> {
      for (let written = 0; written < units; ) {
        const stored = await store.readEvents(sessionId, { afterSeq: 0, limit: Number.POSITIVE_INFINITY });
        const next = stored.length + 1;
        try {
          await store.commit(unitOf(eventsBy(name, next, next + 1)));
          written += 1;
        } catch (error) {
          expect(error).toMatchObject({ code: 'store_failure', details: { reason: 'sequence_conflict' } });
        }
      }
    }
    await Promise.all([append(writers[0]!, 'first', 15), append(writers[1]!, 'second', 15)]);
    const stored = await writers[0]!.readEvents(sessionId, { afterSeq: 0, limit: 1000 });
    expect(seqs(stored)).toEqual(oneTo(60));
    expect((await query<{ last_seq: string }>(url, 'SELECT last_seq FROM event_heads'))[0]?.last_seq).toBe('60');
  });

  it('leaves no gap and no duplicate when two processes keep appending to one session', async () => {
    const url = await server().createDatabase();
    await (await openPostgresStore({ url })).close();
    // Each process appends 20 units of two events, re-reading the session after a refusal. It loads
    // the built package (dist/), as a deployed daemon would.
    const builtPackage = new URL('../dist/index.js', import.meta.url).href;
    const script = `
      import { openPostgresStore } from ${JSON.stringify(builtPackage)};
      const { STORE_URL: url, WRITER: writer, SESSION_ID: sessionId, OWNER_ID: ownerId } = process.env;
      const store = await openPostgresStore({ url, maxConnections: 1, ownerId });
      for (let written = 0; written < 20; ) {
        const next = (await store.readEvents(sessionId, { afterSeq: 0, limit: Infinity })).length + 1;
        const events = [next, next + 1].map((seq) => ({
          type: 'diagnostic', sessionId, seq, at: new Date().toISOString(), level: 'info', code: writer,
        }));
        try {
          await store.commit({ events, sessions: [], runs: [], interactions: [], receipts: [], blobs: [] });
          written += 1;
        } catch (error) {
          if (error?.details?.reason !== 'sequence_conflict') throw error;
        }
      }
      // Ends without close(): closing hands the owner's leases back, and the other process, under
      // the same owner id, may still be writing.
      process.exit(0);`;
    const appendFrom = (writer: string) =>
      promisify(execFile)(process.execPath, ['--input-type=module', '--eval', script], {
        env: { STORE_URL: url, WRITER: writer, SESSION_ID: sessionId, OWNER_ID: ownerId },
      });
    await Promise.all([appendFrom('first'), appendFrom('second')]);

    const stored = await (await openStore(url)).readEvents(sessionId, { afterSeq: 0, limit: 1000 });
    expect(seqs(stored)).toEqual(oneTo(80));
    const byWriter = (writer: string) => stored.filter((event) => (event as { code: string }).code === writer);
    expect(byWriter('first')).toHaveLength(40);
    expect(byWriter('second')).toHaveLength(40);
    // Every unit landed whole: each odd seq and the one after it come from one writer.
    for (let index = 0; index < 80; index += 2) {
      expect((stored[index] as { code: string }).code).toBe((stored[index + 1] as { code: string }).code);
    }
  });

  it('migrates a new database once when four stores open it together', async () => {
    const url = await server().createDatabase();
    const stores = await Promise.all([1, 2, 3, 4].map(() => openStore(url)));
    expect(await query(url, 'SELECT version, name FROM schema_migrations ORDER BY version')).toEqual([
      { version: 1, name: 'initial' },
      { version: 2, name: 'session leases' },
      { version: 3, name: 'session follow-ups and limits' },
      { version: 4, name: 'runtime renewal runs' },
    ]);
    await stores[0]!.commit(unitOf(eventsBy('first', 1, 1)));
    expect(seqs(await stores[3]!.readEvents(sessionId, { afterSeq: 0, limit: 10 }))).toEqual([1]);
  });

  it('migrates a database at version 1 to the latest once when four stores open it together, keeping its events', async () => {
    const url = await server().createDatabase();
    // The schema as a Tether from before leases left it, with a session's events in it.
    await query(url, initialMigration.sql);
    await query(
      url,
      'CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at text NOT NULL)',
    );
    await query(url, `INSERT INTO schema_migrations VALUES (1, 'initial', $1)`, [at]);
    await query(url, `INSERT INTO event_heads VALUES ($1, 1)`, [sessionId]);
    await query(url, `INSERT INTO events VALUES ($1, 1, 'diagnostic', NULL, $2, $3)`, [
      sessionId,
      at,
      JSON.stringify(eventsBy('old', 1, 1)[0]),
    ]);

    const stores = await Promise.all([1, 2, 3, 4].map(() => openStore(url)));
    expect(await query(url, 'SELECT version, name FROM schema_migrations ORDER BY version')).toEqual([
      { version: 1, name: 'initial' },
      { version: 2, name: 'session leases' },
      { version: 3, name: 'session follow-ups and limits' },
      { version: 4, name: 'runtime renewal runs' },
    ]);
    await stores[0]!.commit(unitOf(eventsBy('first', 2, 2)));
    expect(seqs(await stores[3]!.readEvents(sessionId, { afterSeq: 0, limit: 10 }))).toEqual([1, 2]);
  });

  it('refuses a database a newer Tether migrated, naming the versions', async () => {
    const url = await server().createDatabase();
    await (await openPostgresStore({ url })).close();
    await query(url, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (99, 'future', $1)`, [at]);
    const error = await agentErrorOf(openPostgresStore({ url }));
    expect(error.code).toBe('store_failure');
    expect(error.details?.['reason']).toBe('schema_too_new');
    expect(error.message).toContain('schema version 99');
  });

  it('writes nothing of a unit that fails half-way, and the session goes on from where it was', async () => {
    const url = await server().createDatabase();
    const store = await openStore(url);
    await store.commit(unitOf(eventsBy('first', 1, 2), [sampleSessionRecord({ sessionId, lastSeq: 2 })]));
    // The events, the head and the first session row are written before the second row fails:
    // a seq beyond what PostgreSQL's bigint holds.
    const otherSessionId = `ses_${'b'.repeat(32)}`;
    const halfWay = unitOf(eventsBy('first', 3, 5), [
      sampleSessionRecord({ sessionId, lastSeq: 5, state: 'running' }),
      sampleSessionRecord({ sessionId: otherSessionId, lastSeq: Number.MAX_VALUE }),
    ]);
    const error = await agentErrorOf(store.commit(halfWay));
    expect(error.code).toBe('store_failure');
    expect(error.message).toMatch(/^The store could not write the change; nothing was written \(SQLSTATE \w{5}\)/);

    expect(seqs(await store.readEvents(sessionId, { afterSeq: 0, limit: 100 }))).toEqual([1, 2]);
    expect(await store.loadSessions()).toEqual([sampleSessionRecord({ sessionId, lastSeq: 2 })]);
    await store.commit(unitOf(eventsBy('first', 3, 3)));
    expect(seqs(await store.readEvents(sessionId, { afterSeq: 0, limit: 100 }))).toEqual([1, 2, 3]);
  });

  it('commits again on a new connection when its connection breaks mid-commit, storing the unit once', async () => {
    const url = await server().createDatabase();
    const store = await openStore(url);
    await store.commit(unitOf(eventsBy('first', 1, 1)));
    // The commit waits on the head a transaction holds, so its connection can be ended in the middle.
    const holder = new pg.Client({ connectionString: url });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT last_seq FROM event_heads WHERE session_id = $1 FOR UPDATE', [sessionId]);
      const cut = store.commit(unitOf(eventsBy('first', 2, 3)));
      await expect.poll(async () => (await waitingForLocks(url)).length, { timeout: 10_000, interval: 20 }).toBe(1);
      const [waiting] = await waitingForLocks(url);
      await query(url, 'SELECT pg_terminate_backend($1)', [waiting]);
      // Run again on a new connection, it waits on the head as the first did.
      await expect
        .poll(async () => (await waitingForLocks(url)).filter((pid) => pid !== waiting).length, {
          timeout: 10_000,
          interval: 20,
        })
        .toBe(1);
      await holder.query('COMMIT');
      await cut;
    } finally {
      await holder.end();
    }
    expect(seqs(await store.readEvents(sessionId, { afterSeq: 0, limit: 10 }))).toEqual([1, 2, 3]);
  });

  it('reports a server it cannot reach as store_failure, naming where without the password', async () => {
    const error = await agentErrorOf(
      openPostgresStore({ url: 'postgres://tether:not-to-be-shown@127.0.0.1:1/tether' }),
    );
    expect(error.code).toBe('store_failure');
    expect(error.message).toContain('127.0.0.1:1/tether');
    expect(error.message).toContain('ECONNREFUSED');
    expect(error.message).not.toContain('not-to-be-shown');
  });

  it('refuses a store URL that is not a postgres:// URL before connecting', async () => {
    const error = await agentErrorOf(openPostgresStore({ url: 'mysql://tether@127.0.0.1/tether' }));
    expect(error.code).toBe('store_failure');
    expect(error.details?.['reason']).toBe('invalid_url');
  });
});
