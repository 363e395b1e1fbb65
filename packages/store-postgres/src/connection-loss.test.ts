import type { ProtocolEvent } from '@tether/protocol';
import type { AppendNotice } from '@tether/runtime';
import { agentErrorOf, sampleSessionRecord } from '@tether/testkit';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import {
  diagnosticEvents,
  noticeListeners as listeners,
  query,
  seqs,
  unitOf as unitWith,
  useStores,
} from './__fixtures__/database-fixtures.js';
import { openLink } from './__fixtures__/database-link.js';
import { useTestServer } from './__fixtures__/test-server.js';
import { retryConnectionLoss } from './connection-retry.js';

// The server is restarted under open stores (its own server for this file): what was committed
// stays, what is written during the outage lands once it is back, or fails with store_failure when
// it stays away past the store's retry bound (about 10 s).
const server = useTestServer();
const openShared = useStores();
const openStore = (url: string, ownerId: string) => openShared({ url, maxConnections: 2, ownerId });

const sessionId = `ses_${'a'.repeat(32)}`;
/** Events from..to of the session, with its row. */
function unitOf(from: number, to: number) {
  return unitWith(diagnosticEvents(sessionId, from, to), [sampleSessionRecord({ sessionId, lastSeq: to })]);
}

/**
 * Makes every COMMIT that stored an event wait on an advisory lock the test holds (a deferred
 * trigger), so a connection can be ended in the middle of COMMIT itself. `committers` are the
 * backends waiting there; `open` lets them through; `end` closes the gate's connection.
 */
async function commitGate(url: string) {
  await query(
    url,
    `CREATE FUNCTION wait_at_commit() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN PERFORM pg_advisory_lock_shared(42); PERFORM pg_advisory_unlock_shared(42); RETURN NULL; END $$`,
  );
  await query(
    url,
    `CREATE CONSTRAINT TRIGGER wait_at_commit AFTER INSERT ON events DEFERRABLE INITIALLY DEFERRED
      FOR EACH ROW EXECUTE FUNCTION wait_at_commit()`,
  );
  const gate = new pg.Client({ connectionString: url });
  await gate.connect();
  await gate.query('SELECT pg_advisory_lock(42)');
  return {
    committers: async () =>
      (
        await query<{ pid: number }>(
          url,
          `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query = 'COMMIT'`,
        )
      ).map((row) => row.pid),
    open: () => gate.query('SELECT pg_advisory_unlock(42)'),
    end: () => gate.end(),
  };
}

describe('PostgreSQL store: connection loss', () => {
  it('lands a commit made while the server is down once it is back, and its followers resync', async () => {
    const url = await server().createDatabase();
    const [writer, follower] = await Promise.all([openStore(url, 'daemon-a'), openStore(url, 'daemon-b')]);
    const heard: (AppendNotice | 'resync')[] = [];
    follower.coordination.onAppended((notice) => heard.push(notice));
    await expect.poll(() => listeners(url), { timeout: 10_000, interval: 20 }).toHaveLength(1);
    await writer.coordination.claim(sessionId);
    await writer.commit(unitOf(1, 2));

    let duringOutage: Promise<void> | undefined;
    let readAfterIt: Promise<ProtocolEvent[]> | undefined;
    let countedDuringOutage: Promise<unknown> | undefined;
    await server().restart({
      whileStopped: async () => {
        await expect(query(url, 'SELECT 1')).rejects.toThrow();
        duringOutage = writer.commit(unitOf(3, 4));
        // A read waits for the writes called before it; another store's read just waits for the server.
        readAfterIt = writer.readEvents(sessionId, { afterSeq: 0, limit: 10 });
        countedDuringOutage = follower.countSessionsByState();
      },
    });
    await duringOutage;
    expect(seqs(await readAfterIt!)).toEqual([1, 2, 3, 4]);
    expect(await countedDuringOutage).toEqual({ idle: 1, running: 0, waiting: 0, closed: 0 });
    expect(seqs(await follower.readEvents(sessionId, { afterSeq: 0, limit: 10 }))).toEqual([1, 2, 3, 4]);
    expect((await follower.getSession(sessionId))?.lastSeq).toBe(4);

    // The follower's notice connection came back and said so (its first LISTEN said resync too); it
    // hears the writer's appends again.
    const resyncs = () => heard.filter((notice) => notice === 'resync').length;
    await expect.poll(resyncs, { timeout: 15_000, interval: 20 }).toBe(2);
    await writer.commit(unitOf(5, 5));
    await expect
      .poll(() => heard.slice(heard.lastIndexOf('resync') + 1), { timeout: 10_000, interval: 20 })
      .toContainEqual({ sessionId, seq: 5 });
    // Its lease held through the outage: the other store still finds it taken.
    expect(await follower.coordination.claim(sessionId)).toMatchObject({ status: 'held_elsewhere' });
  }, 60_000);

  it('fails a commit with store_failure store_unreachable when the server stays down past the retry bound, having written nothing', async () => {
    const url = await server().createDatabase();
    const writer = await openStore(url, 'daemon-a');
    await writer.commit(unitOf(1, 1));
    const started = Date.now();
    await server().restart({
      whileStopped: async () => {
        const error = await agentErrorOf(writer.commit(unitOf(2, 3)));
        expect(error.code).toBe('store_failure');
        expect(error.details?.['reason']).toBe('store_unreachable');
        expect(error.message).toContain('write the change; nothing was written');
        expect(error.message).not.toContain(new URL(url).password);
      },
    });
    // It retried for about 10 s before giving up.
    expect(Date.now() - started).toBeGreaterThanOrEqual(8_000);
    expect(seqs(await writer.readEvents(sessionId, { afterSeq: 0, limit: 10 }))).toEqual([1]);
    await writer.commit(unitOf(2, 3));
    expect(seqs(await writer.readEvents(sessionId, { afterSeq: 0, limit: 10 }))).toEqual([1, 2, 3]);
  }, 60_000);

  it('settles a commit whose connection is ended while it commits by reading the heads, and stores it once', async () => {
    const url = await server().createDatabase();
    const writer = await openStore(url, 'daemon-a');
    await writer.commit(unitOf(1, 1));
    const gate = await commitGate(url);
    try {
      const committing = writer.commit(unitOf(2, 3));
      await expect.poll(gate.committers, { timeout: 10_000, interval: 20 }).toHaveLength(1);
      const [cut] = await gate.committers();
      await query(url, 'SELECT pg_terminate_backend($1)', [cut]);
      await expect
        .poll(async () => (await gate.committers()).filter((pid) => pid !== cut), { timeout: 10_000, interval: 20 })
        .toHaveLength(1);
      await gate.open();
      await committing;
    } finally {
      await gate.end();
    }
    expect(seqs(await writer.readEvents(sessionId, { afterSeq: 0, limit: 10 }))).toEqual([1, 2, 3]);
  });

  it('never calls a commit whose answer was lost committed when another store took the session over and wrote those seqs', async () => {
    const url = await server().createDatabase();
    const link = await openLink(url);
    try {
      const writer = await openShared({ url: link.url, maxConnections: 2, ownerId: 'daemon-a', leaseTtlMs: 1_000 });
      const other = await openShared({ url, maxConnections: 2, ownerId: 'daemon-b', leaseTtlMs: 1_000 });
      await writer.commit(unitOf(1, 1));
      const gate = await commitGate(url);
      try {
        const committing = agentErrorOf(writer.commit(unitOf(2, 2)));
        await expect.poll(gate.committers, { timeout: 10_000, interval: 20 }).toHaveLength(1);
        // The writer's way to the database goes down in the middle of its COMMIT, which rolls back;
        // its lease lapses, and the other store takes the session and writes the same seqs.
        link.cut();
        const [cut] = await gate.committers();
        await query(url, 'SELECT pg_terminate_backend($1)', [cut]);
        await gate.open();
        await expect
          .poll(async () => (await other.coordination.claim(sessionId)).status, { timeout: 10_000, interval: 50 })
          .toBe('claimed');
        const taken = diagnosticEvents(sessionId, 2, 3, 'from.takeover');
        await other.commit(unitWith(taken, [sampleSessionRecord({ sessionId, lastSeq: 3 })]));
        link.restore();
        const error = await committing;
        expect(error.code).toBe('store_failure');
      } finally {
        await gate.end();
      }
      const stored = await other.readEvents(sessionId, { afterSeq: 0, limit: 10 });
      expect(seqs(stored)).toEqual([1, 2, 3]);
      expect(stored.slice(1).map((event) => (event as { code?: string }).code)).toEqual([
        'from.takeover',
        'from.takeover',
      ]);
    } finally {
      await link.close();
    }
  });

  it('runs a transaction again when the server ended it for sitting idle past its bound (25P03), as it ends a frozen commit', async () => {
    const url = await server().createDatabase();
    const errors: unknown[] = [];
    let attempts = 0;
    const answer = await retryConnectionLoss('read one', async () => {
      attempts += 1;
      const client = new pg.Client({ connectionString: url, idle_in_transaction_session_timeout: 100 });
      client.on('error', () => undefined);
      await client.connect();
      try {
        await client.query('BEGIN');
        // The first attempt stalls the whole process past the bound, as a daemon stopped mid-commit:
        // its next statement is sent before it reads that the server ended the connection.
        if (attempts === 1) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 400);
        return (await client.query<{ one: number }>('SELECT 1 AS one')).rows[0]?.one;
      } catch (error) {
        errors.push(error);
        throw error;
      } finally {
        await client.end().catch(() => undefined);
      }
    });
    expect(answer).toBe(1);
    expect(attempts).toBe(2);
    expect(errors).toMatchObject([{ code: '25P03' }]);
  });
});
