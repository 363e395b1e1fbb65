import type { SessionCoordination } from '@tether/runtime';
import { agentErrorOf, sampleSessionRecord } from '@tether/testkit';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { diagnosticEvents, query, unitOf, useStores } from './__fixtures__/database-fixtures.js';
import { useTestServer } from './__fixtures__/test-server.js';
import { openPostgresStore } from './index.js';
import { stopInsideCommit } from './test-support.js';

// Stores on one database standing for daemons sharing it, each with its own owner id. Short lease
// ttls, so a holder that stops renewing is taken over within a test's time.
const server = useTestServer();
const openShared = useStores();

const holders: pg.Client[] = [];
afterEach(async () => {
  await Promise.all(holders.splice(0).map((client) => client.end().catch(() => undefined)));
});

const leaseTtlMs = 1000;

const openStore = (url: string, ownerId: string) => openShared({ url, maxConnections: 3, ownerId, leaseTtlMs });

/**
 * Stops a runtime's heartbeat as a stuck daemon's would stop: a transaction locks its row, so its
 * renewals wait, and its leases lapse once the ttl passes. Releasing the lock lets them through.
 */
async function stallHeartbeat(url: string, ownerId: string): Promise<() => Promise<void>> {
  const client = new pg.Client({ connectionString: url });
  holders.push(client);
  await client.connect();
  await client.query('BEGIN');
  await client.query('SELECT owner_id FROM runtimes WHERE owner_id = $1 FOR UPDATE', [ownerId]);
  return async () => {
    await client.query('ROLLBACK');
  };
}

async function tokenOf(url: string, sessionId: string): Promise<{ owner_id: string; token: string } | undefined> {
  return (
    await query<{ owner_id: string; token: string }>(
      url,
      'SELECT owner_id, token FROM session_leases WHERE session_id = $1',
      [sessionId],
    )
  )[0];
}

/** Claims until the claim succeeds (the holder's lease lapsing), within a bound. */
async function claimOnceLapsed(coordination: SessionCoordination, sessionId: string): Promise<void> {
  await expect
    .poll(async () => (await coordination.claim(sessionId)).status, { timeout: 10_000, interval: 50 })
    .toBe('claimed');
}

const sessionId = `ses_${'a'.repeat(32)}`;
const otherSessionId = `ses_${'b'.repeat(32)}`;
const thirdSessionId = `ses_${'c'.repeat(32)}`;
const fourthSessionId = `ses_${'d'.repeat(32)}`;
const eventsOf = (sessionId: string, from: number, to: number) => diagnosticEvents(sessionId, from, to);

describe('PostgreSQL store: session leases', () => {
  it('gives a session to the first claimer and names it, with its advertised address, to the next', async () => {
    const url = await server().createDatabase();
    const [first, second] = await Promise.all([openStore(url, 'daemon-a'), openStore(url, 'daemon-b')]);
    expect(await first.coordination.claim(sessionId)).toEqual({ status: 'claimed' });
    expect(await second.coordination.claim(sessionId)).toEqual({
      status: 'held_elsewhere',
      holder: { ownerId: 'daemon-a', address: null },
    });
    await first.coordination.advertise('http://10.0.0.1:7420');
    expect(await second.coordination.claim(sessionId)).toEqual({
      status: 'held_elsewhere',
      holder: { ownerId: 'daemon-a', address: 'http://10.0.0.1:7420' },
    });
    expect(first.coordination.ownerId).toBe('daemon-a');
    // A commit on the other's session is refused whole, naming it.
    const refused = await agentErrorOf(
      second.commit(unitOf([...eventsOf(sessionId, 1, 1), ...eventsOf(otherSessionId, 1, 1)])),
    );
    expect(refused.code).toBe('store_failure');
    expect(refused.details).toEqual({ reason: 'lease_lost', sessionIds: [sessionId] });
    expect(await first.readEvents(otherSessionId, { afterSeq: 0, limit: 10 })).toEqual([]);
  });

  it('lets the same owner claim again (a restarted daemon) without raising the token: its commits still pass', async () => {
    const url = await server().createDatabase();
    const before = await openStore(url, 'daemon-a');
    await before.coordination.claim(sessionId);
    await before.commit(unitOf(eventsOf(sessionId, 1, 1)));
    const restarted = await openStore(url, 'daemon-a');
    expect(await restarted.coordination.claim(sessionId)).toEqual({ status: 'claimed' });
    expect(await tokenOf(url, sessionId)).toEqual({ owner_id: 'daemon-a', token: '1' });
    await restarted.commit(unitOf(eventsOf(sessionId, 2, 2)));
    await before.commit(unitOf(eventsOf(sessionId, 3, 3)));
    expect((await restarted.readEvents(sessionId, { afterSeq: 0, limit: 10 })).map((event) => event.seq)).toEqual([
      1, 2, 3,
    ]);
  });

  it('claims inline a session no one holds when a commit writes it first', async () => {
    const url = await server().createDatabase();
    const [first, second] = await Promise.all([openStore(url, 'daemon-a'), openStore(url, 'daemon-b')]);
    await first.commit(unitOf(eventsOf(sessionId, 1, 1), [sampleSessionRecord({ sessionId, lastSeq: 1 })]));
    expect(await second.coordination.claim(sessionId)).toMatchObject({ status: 'held_elsewhere' });
  });

  it("takes over a holder that stopped renewing with a higher token, and refuses the stale holder's commit", async () => {
    const url = await server().createDatabase();
    const [stale, survivor] = await Promise.all([openStore(url, 'daemon-a'), openStore(url, 'daemon-b')]);
    await stale.coordination.claim(sessionId);
    await stale.commit(unitOf(eventsOf(sessionId, 1, 2), [sampleSessionRecord({ sessionId, lastSeq: 2 })]));
    expect(await survivor.coordination.claim(sessionId)).toMatchObject({ status: 'held_elsewhere' });

    await stallHeartbeat(url, 'daemon-a');
    await claimOnceLapsed(survivor.coordination, sessionId);
    expect(await tokenOf(url, sessionId)).toEqual({ owner_id: 'daemon-b', token: '2' });

    const refused = await agentErrorOf(
      stale.commit(
        unitOf(eventsOf(sessionId, 3, 3), [sampleSessionRecord({ sessionId, lastSeq: 3, state: 'running' })]),
      ),
    );
    expect(refused.code).toBe('store_failure');
    expect(refused.details).toEqual({ reason: 'lease_lost', sessionIds: [sessionId] });
    expect((await survivor.readEvents(sessionId, { afterSeq: 0, limit: 10 })).map((event) => event.seq)).toEqual([
      1, 2,
    ]);
    expect((await survivor.getSession(sessionId))?.state).toBe('idle');
    // Nor can it delete it; the survivor writes on.
    expect((await agentErrorOf(stale.deleteSession(sessionId))).details).toMatchObject({ reason: 'lease_lost' });
    await survivor.commit(unitOf(eventsOf(sessionId, 3, 3)));
  });

  it('takes over a holder frozen inside a commit: the server ends its transaction after the ttl, and its commit is refused', async () => {
    const url = await server().createDatabase();
    // The holder is a process of its own (the built package, as a daemon loads it), so it can be
    // stopped. It commits event 1, then event 2 when told, and prints each outcome.
    const builtPackage = new URL('../dist/index.js', import.meta.url).href;
    const script = `
      import { createInterface } from 'node:readline';
      import { openPostgresStore } from ${JSON.stringify(builtPackage)};
      const { STORE_URL: url, SESSION_ID: sessionId } = process.env;
      const store = await openPostgresStore({ url, maxConnections: 2, ownerId: 'frozen', leaseTtlMs: ${leaseTtlMs} });
      const commit = (seq) =>
        store.commit({
          events: [{ type: 'diagnostic', sessionId, seq, at: new Date().toISOString(), level: 'info', code: 'frozen' }],
          sessions: [], runs: [], interactions: [], receipts: [], blobs: [],
        }).then(() => 'committed', (error) => error?.details?.reason ?? String(error));
      console.log(await commit(1));
      for await (const line of createInterface({ input: process.stdin })) console.log(await commit(Number(line)));`;
    const holder = spawn(process.execPath, ['--input-type=module', '--eval', script], {
      env: { STORE_URL: url, SESSION_ID: sessionId },
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    const outcomes = createInterface({ input: holder.stdout })[Symbol.asyncIterator]();
    try {
      expect((await outcomes.next()).value).toBe('committed');
      await stopInsideCommit({
        url,
        sessionId,
        commit: () => holder.stdin.write('2\n'),
        stop: () => holder.kill('SIGSTOP'),
      });

      const survivor = await openStore(url, 'survivor');
      await claimOnceLapsed(survivor.coordination, sessionId);
      expect(await tokenOf(url, sessionId)).toEqual({ owner_id: 'survivor', token: '2' });
      await survivor.commit(unitOf(eventsOf(sessionId, 2, 2)));

      holder.kill('SIGCONT');
      expect((await outcomes.next()).value).toBe('lease_lost');
      expect(
        (await survivor.readEvents(sessionId, { afterSeq: 0, limit: 10 })).map(
          (event) => (event as { code: string }).code,
        ),
      ).toEqual(['frozen', 'test']);
    } finally {
      holder.kill('SIGCONT');
      holder.kill('SIGKILL');
      if (holder.exitCode === null && holder.signalCode === null) await once(holder, 'close');
    }
  });

  it('reports the sessions another runtime took through onLost once its heartbeat runs again', async () => {
    const url = await server().createDatabase();
    const [stale, survivor] = await Promise.all([openStore(url, 'daemon-a'), openStore(url, 'daemon-b')]);
    const lost: (readonly string[])[] = [];
    stale.coordination.onLost((sessionIds) => lost.push(sessionIds));
    await stale.coordination.claim(sessionId);
    await stale.coordination.claim(otherSessionId);

    const resume = await stallHeartbeat(url, 'daemon-a');
    await claimOnceLapsed(survivor.coordination, sessionId);
    await resume();
    await expect.poll(() => lost, { timeout: 10_000, interval: 20 }).toEqual([[sessionId]]);
    // The one it kept is still its own; the lost one is the survivor's while the survivor renews.
    await stale.commit(unitOf(eventsOf(otherSessionId, 1, 1)));
    expect(await stale.coordination.claim(sessionId)).toEqual({
      status: 'held_elsewhere',
      holder: { ownerId: 'daemon-b', address: null },
    });
  });

  it('holds a deleted session no longer: its heartbeat never reports it lost', async () => {
    const url = await server().createDatabase();
    const store = await openStore(url, 'daemon-a');
    const lost: (readonly string[])[] = [];
    store.coordination.onLost((sessionIds) => lost.push(sessionIds));
    await store.coordination.claim(sessionId);
    await store.coordination.claim(otherSessionId);
    await store.commit(unitOf(eventsOf(sessionId, 1, 2), [sampleSessionRecord({ sessionId, lastSeq: 2 })]));

    await store.deleteSession(sessionId);
    expect(await tokenOf(url, sessionId)).toBeUndefined();
    // Another runtime takes the kept session, so a heartbeat has something to report: only that one.
    await query(url, 'UPDATE session_leases SET owner_id = $2, token = token + 1 WHERE session_id = $1', [
      otherSessionId,
      'daemon-b',
    ]);
    await expect.poll(() => lost, { timeout: 10_000, interval: 20 }).toEqual([[otherSessionId]]);
    // A session of the same id written again is claimed afresh, as any session no one holds.
    await store.commit(unitOf(eventsOf(sessionId, 1, 1)));
    expect(await tokenOf(url, sessionId)).toEqual({ owner_id: 'daemon-a', token: '1' });
  });

  it('lists open sessions no live runtime holds as orphans, not closed ones nor those held', async () => {
    const url = await server().createDatabase();
    const [holder, finder] = await Promise.all([openStore(url, 'daemon-a'), openStore(url, 'daemon-b')]);
    const liveProcess = { pid: 1234, startTime: null, marker: 'marker' };
    await holder.commit(
      unitOf(
        [],
        [
          sampleSessionRecord({ sessionId, state: 'idle' }),
          sampleSessionRecord({ sessionId: otherSessionId, state: 'closed' }),
          sampleSessionRecord({ sessionId: thirdSessionId, state: 'running' }),
          sampleSessionRecord({ sessionId: fourthSessionId, state: 'closed', liveProcess }),
        ],
      ),
    );
    expect(await finder.coordination.findOrphans()).toEqual([]);
    await holder.coordination.release([sessionId, otherSessionId, fourthSessionId]);
    expect(await finder.coordination.findOrphans()).toEqual([sessionId, fourthSessionId]);

    await stallHeartbeat(url, 'daemon-a');
    await expect
      .poll(() => finder.coordination.findOrphans(), { timeout: 10_000, interval: 50 })
      .toEqual([sessionId, thirdSessionId, fourthSessionId]);
    // Its own stale-looking leases are not orphans to the holder itself: it claims them back as its own.
    expect(await holder.coordination.findOrphans()).toEqual([sessionId, fourthSessionId]);
  });

  it('hands every lease back when it closes, so another runtime claims them at once', async () => {
    const url = await server().createDatabase();
    const [closing, other] = await Promise.all([
      openPostgresStore({ url, ownerId: 'daemon-a', leaseTtlMs: 60_000 }),
      openStore(url, 'daemon-b'),
    ]);
    await closing.coordination!.claim(sessionId);
    await closing.commit(unitOf([], [sampleSessionRecord({ sessionId, state: 'idle' })]));
    expect(await other.coordination.claim(sessionId)).toMatchObject({ status: 'held_elsewhere' });
    await closing.close();
    expect(await other.coordination.findOrphans()).toEqual([sessionId]);
    expect(await other.coordination.claim(sessionId)).toEqual({ status: 'claimed' });
    expect(await query(url, 'SELECT owner_id FROM runtimes ORDER BY owner_id')).toEqual([{ owner_id: 'daemon-b' }]);
  });

  it('releases only its own leases, after the writes called before', async () => {
    const url = await server().createDatabase();
    const [first, second] = await Promise.all([openStore(url, 'daemon-a'), openStore(url, 'daemon-b')]);
    await second.coordination.claim(otherSessionId);
    const written = first.commit(unitOf(eventsOf(sessionId, 1, 1)));
    await first.coordination.release([sessionId, otherSessionId]);
    await written;
    expect(await tokenOf(url, sessionId)).toBeUndefined();
    expect(await tokenOf(url, otherSessionId)).toEqual({ owner_id: 'daemon-b', token: '1' });
  });
});
