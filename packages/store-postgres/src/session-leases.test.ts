import type { SessionCoordination } from '@tether/runtime';
import { agentErrorOf, sampleSessionRecord } from '@tether/testkit';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { diagnosticEvents, query, unitOf, useHeartbeatStalls, useStores } from './__fixtures__/database-fixtures.js';
import { useTestServer } from './__fixtures__/test-server.js';
import { openPostgresStore } from './index.js';
import { stopInsideCommit } from './test-support.js';

// Stores on one database standing for daemons sharing it, each with its own owner id. Short lease
// ttls, so a holder that stops renewing is taken over within a test's time.
const server = useTestServer();
const openShared = useStores();
const stallHeartbeat = useHeartbeatStalls();

const leaseTtlMs = 1000;

const openStore = (url: string, ownerId: string) => openShared({ url, maxConnections: 3, ownerId, leaseTtlMs });

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

  it('judges no holder dead while its own heartbeat hangs, and gives one a whole ttl once it renews again', async () => {
    const url = await server().createDatabase();
    const [holder, judge] = await Promise.all([openStore(url, 'daemon-a'), openStore(url, 'daemon-b')]);
    await holder.commit(unitOf([], [sampleSessionRecord({ sessionId, state: 'idle' })]));
    // Both heartbeats hang (a network cut that drops packets, say) past the ttl: by the database's
    // clock neither renewed for longer than a lease lives.
    const resumeHolder = await stallHeartbeat(url, 'daemon-a');
    const resumeJudge = await stallHeartbeat(url, 'daemon-b');
    await expect
      .poll(
        async () =>
          (
            await query<{ owner_id: string }>(
              url,
              `SELECT owner_id FROM runtimes WHERE heartbeat_at + lease_ttl_ms * interval '1 millisecond' > now()`,
            )
          ).length,
        { timeout: 10_000, interval: 20 },
      )
      .toBe(0);
    // The judge's own heartbeat has not landed: it takes no one for dead.
    expect(await judge.coordination.findOrphans()).toEqual([]);
    expect(await judge.coordination.claim(sessionId)).toMatchObject({ status: 'held_elsewhere' });
    // Its hung beat lands (late: a new run of renewals), the holder's not yet: still the holder's.
    await resumeJudge();
    await expect
      .poll(
        async () =>
          (
            await query(
              url,
              `SELECT 1 FROM runtimes WHERE owner_id = 'daemon-b' AND heartbeat_at > now() - interval '1 second' AND renewing_since > now() - interval '1 second'`,
            )
          ).length,
        {
          timeout: 10_000,
          interval: 10,
        },
      )
      .toBe(1);
    expect(await judge.coordination.findOrphans()).toEqual([]);
    expect(await judge.coordination.claim(sessionId)).toMatchObject({ status: 'held_elsewhere' });
    // The holder never comes back: a ttl into the judge's new run, its session is the judge's to take.
    await expect.poll(() => judge.coordination.findOrphans(), { timeout: 10_000, interval: 20 }).toEqual([sessionId]);
    expect(await judge.coordination.claim(sessionId)).toEqual({ status: 'claimed' });
    await resumeHolder();
  });

  it("refuses to open a second store with a live runtime's owner id (a copied data dir), writing nothing: the first keeps its sessions and address", async () => {
    const url = await server().createDatabase();
    const live = await openStore(url, 'daemon-a');
    await live.coordination.advertise('http://daemon-a.test:7777');
    await live.coordination.claim(sessionId);
    await live.commit(unitOf(eventsOf(sessionId, 1, 1), [sampleSessionRecord({ sessionId, lastSeq: 1 })]));

    const refusal = await agentErrorOf(
      openPostgresStore({ url, ownerId: 'daemon-a', leaseTtlMs, maxConnections: 2, exclusiveOwner: true }),
    );
    expect(refusal).toMatchObject({ code: 'store_failure', details: { reason: 'owner_id_in_use' } });
    expect(refusal.message).toContain('daemon-a');
    expect(refusal.message).toContain('http://daemon-a.test:7777');
    expect(refusal.message).toContain('its own data dir');
    expect(refusal.message).toContain('delete the store-owner-id file');
    // Nothing of the first changed: its row, its lease, its commits; another runtime is sent to it.
    expect(await query(url, 'SELECT owner_id, address FROM runtimes')).toEqual([
      { owner_id: 'daemon-a', address: 'http://daemon-a.test:7777' },
    ]);
    expect(await tokenOf(url, sessionId)).toEqual({ owner_id: 'daemon-a', token: '1' });
    await live.commit(unitOf(eventsOf(sessionId, 2, 2)));
    const other = await openStore(url, 'daemon-b');
    expect(await other.coordination.claim(sessionId)).toEqual({
      status: 'held_elsewhere',
      holder: { ownerId: 'daemon-a', address: 'http://daemon-a.test:7777' },
    });
  });

  it('opens with an owner id whose previous process died within its ttl once its heartbeat is seen stopped, and takes its leases back', async () => {
    const url = await server().createDatabase();
    await openStore(url, 'daemon-b');
    // What a process killed a moment ago leaves: a fresh row no one renews (its ttl 6 s, a beat every
    // 2 s), and its lease.
    const diedAt = performance.now();
    await query(
      url,
      `INSERT INTO runtimes (owner_id, address, heartbeat_at, lease_ttl_ms) VALUES ($1, $2, now(), $3)`,
      ['daemon-a', 'http://daemon-a.test:7777', 6_000],
    );
    await query(url, 'INSERT INTO session_leases (session_id, owner_id, token) VALUES ($1, $2, 3)', [
      sessionId,
      'daemon-a',
    ]);
    const restarted = await openShared({
      url,
      ownerId: 'daemon-a',
      leaseTtlMs,
      maxConnections: 2,
      exclusiveOwner: true,
    });
    // Two of its beats without one: before the row would have lapsed.
    expect(performance.now() - diedAt).toBeLessThan(6_000);
    expect(await restarted.coordination.claim(sessionId)).toEqual({ status: 'claimed' });
    await restarted.commit(unitOf(eventsOf(sessionId, 1, 1)));
    expect(await tokenOf(url, sessionId)).toEqual({ owner_id: 'daemon-a', token: '3' });
    // A row its runtime removed at a clean close, or one that lapsed, is no one's: opened at once.
    await restarted.close();
    await openShared({ url, ownerId: 'daemon-a', leaseTtlMs, maxConnections: 2, exclusiveOwner: true });
  });
});
