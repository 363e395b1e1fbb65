import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { ProtocolEvent } from '@tether/protocol';
import {
  type AgentRuntime,
  type LeaseChange,
  type SessionCoordination,
  type TetherStore,
  createAgentRuntime,
} from '@tether/runtime';
import { type MockProvider, type MockTurnScript, agentErrorOf, createMockProvider } from '@tether/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { noticeListeners, query, seqs, useHeartbeatStalls } from './__fixtures__/database-fixtures.js';
import { type DatabaseLink, openLink } from './__fixtures__/database-link.js';
import { useTestServer } from './__fixtures__/test-server.js';
import { openPostgresStore } from './index.js';

// Two runtimes (as two daemons would run them) sharing one database of a real server.
const server = useTestServer();
const stallHeartbeat = useHeartbeatStalls();

/** Short, so a runtime that stops renewing loses its sessions within a test. */
const leaseTtlMs = 1_000;

interface Daemon {
  readonly ownerId: string;
  readonly runtime: AgentRuntime;
  readonly store: TetherStore;
  readonly provider: MockProvider;
  readonly link: DatabaseLink;
  /** Every lease change the runtime told its host of (onLeaseChange). */
  readonly leaseChanges: LeaseChange[];
  /** How many of the runtime's orphan searches have answered so far (with `sweepIntervalMs`). */
  readonly sweeps: () => number;
}

const started: Daemon[] = [];
let workspace = '';

beforeEach(async () => {
  workspace = await mkdtemp(path.join(os.tmpdir(), 'tether-sharing-'));
});

afterEach(async () => {
  for (const daemon of started.splice(0)) {
    daemon.link.restore();
    await daemon.runtime.shutdown({ force: true });
    await daemon.link.close();
  }
  await rm(workspace, { recursive: true, force: true });
});

/**
 * The store as the runtime sees it, sweeping every `sweepIntervalMs` instead of every ttl (so a
 * test knows a sweep ran soon after something changed) and counting the orphan searches answered.
 */
function sweepingEvery(store: TetherStore, sweepIntervalMs: number, swept: () => void): TetherStore {
  const inner = store.coordination!;
  const coordination: SessionCoordination = {
    ...inner,
    sweepIntervalMs,
    findOrphans: async () => {
      const orphans = await inner.findOrphans();
      swept();
      return orphans;
    },
  };
  return new Proxy(store, {
    get: (target, property, receiver) =>
      property === 'coordination' ? coordination : (Reflect.get(target, property, receiver) as unknown),
  });
}

async function startDaemon(
  url: string,
  ownerId: string,
  turn?: MockTurnScript,
  options: { sweepIntervalMs?: number; leaseTtlMs?: number; adoptsOrphanedSessions?: boolean } = {},
): Promise<Daemon> {
  const link = await openLink(url);
  const opened = await openPostgresStore({
    url: link.url,
    ownerId,
    leaseTtlMs: options.leaseTtlMs ?? leaseTtlMs,
    maxConnections: 4,
  });
  let sweeps = 0;
  const store =
    options.sweepIntervalMs === undefined
      ? opened
      : sweepingEvery(opened, options.sweepIntervalMs, () => {
          sweeps += 1;
        });
  const provider = createMockProvider(turn ? { turn } : {});
  const leaseChanges: LeaseChange[] = [];
  const runtime = await createAgentRuntime({
    providers: [provider],
    store,
    onLeaseChange: (change) => leaseChanges.push(change),
    ...(options.adoptsOrphanedSessions === undefined ? {} : { adoptsOrphanedSessions: options.adoptsOrphanedSessions }),
  });
  const daemon = { ownerId, runtime, store, provider, link, leaseChanges, sweeps: () => sweeps };
  started.push(daemon);
  return daemon;
}

/** Who holds each of these sessions' leases now (null: no one). */
async function holdersOf(url: string, sessionIds: readonly string[]): Promise<(string | null)[]> {
  const rows = await query<{ session_id: string; owner_id: string }>(
    url,
    'SELECT session_id, owner_id FROM session_leases WHERE session_id = ANY($1::text[])',
    [sessionIds],
  );
  const owners = new Map(rows.map((row) => [row.session_id, row.owner_id]));
  return sessionIds.map((sessionId) => owners.get(sessionId) ?? null);
}

/** The owners whose runtime renewed its row within its ttl, by the database's clock. */
async function aliveRuntimes(url: string): Promise<string[]> {
  const rows = await query<{ owner_id: string }>(
    url,
    `SELECT owner_id FROM runtimes WHERE heartbeat_at + lease_ttl_ms * interval '1 millisecond' > now() ORDER BY owner_id`,
  );
  return rows.map((row) => row.owner_id);
}

/** Two runtimes on a new database; B's agent answers each turn at once unless given its own script. */
async function twoDaemons(
  turnOnA?: MockTurnScript,
  turnOnB?: MockTurnScript,
): Promise<{ url: string; a: Daemon; b: Daemon }> {
  const url = await server().createDatabase();
  const a = await startDaemon(url, 'owner-a', turnOnA);
  const b = await startDaemon(url, 'owner-b', turnOnB);
  // Both hear appends from here on (a listener connects once its runtime starts).
  await expect.poll(async () => (await noticeListeners(url)).length, { timeout: 10_000, interval: 20 }).toBe(2);
  return { url, a, b };
}

/** Follows a session through a runtime, keeping every event handed on; waitFor resolves at the first that matches. */
function follow(runtime: AgentRuntime, sessionId: string) {
  const events: ProtocolEvent[] = [];
  const waiting = new Set<{ match: (event: ProtocolEvent) => boolean; resolve: (event: ProtocolEvent) => void }>();
  let failure: unknown;
  const stop = runtime.follow(sessionId, {
    afterSeq: 0,
    onEvent: (event) => {
      events.push(event);
      for (const waiter of waiting)
        if (waiter.match(event)) {
          waiting.delete(waiter);
          waiter.resolve(event);
        }
    },
    onError: (error) => {
      failure = error;
    },
  });
  return {
    events,
    stop,
    get failure() {
      return failure;
    },
    waitFor(match: (event: ProtocolEvent) => boolean): Promise<ProtocolEvent> {
      const found = events.find(match);
      if (found) return Promise.resolve(found);
      return new Promise((resolve) => waiting.add({ match, resolve }));
    },
  };
}

/** A promise the test settles: a turn that waits on it stays running until then. */
function gate(): { opened: Promise<void>; open(): void } {
  let open = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

const oneTo = (last: number) => Array.from({ length: last }, (_, index) => index + 1);
const text = (value: string) => [{ type: 'text' as const, text: value }];

describe('runtimes sharing a PostgreSQL store', () => {
  it("hands a turn on A's session to B's followers live, every event in order with no gap and no duplicate", async () => {
    const released = gate();
    const { a, b } = await twoDaemons(async ({ runId, emit }) => {
      emit({ type: 'run.message_delta', runId, blockId: 'b:0', text: 'first ' });
      await released.opened;
      for (let index = 0; index < 40; index += 1) {
        emit({ type: 'run.message_delta', runId, blockId: 'b:0', text: `${index} ` });
        await new Promise((resolve) => setImmediate(resolve));
      }
      emit({ type: 'run.completed', runId, outcome: 'succeeded' });
    });
    const { sessionId } = await a.runtime.openSession({ workspace: { kind: 'directory', path: workspace } });
    const followed = follow(b.runtime, sessionId);
    await followed.waitFor((event) => event.type === 'session.opened');
    const { runId } = await a.runtime.submitTurn({ sessionId, input: text('go') });
    const waited = b.runtime.waitForRun(runId);
    // Seen through B while A's run is still running: handed on live, not read back once it ended.
    await followed.waitFor((event) => event.type === 'run.message_delta' && event.text === 'first ');
    expect((await a.runtime.getSession(sessionId)).activeRunId).toBe(runId);
    released.open();
    await followed.waitFor((event) => event.type === 'run.completed');
    expect(await waited).toMatchObject({ runId, status: 'completed', outcome: 'succeeded' });
    followed.stop();
    const stored = await a.runtime.readEvents(sessionId, { limit: 10_000 });
    const handedOn = followed.events.slice(0, stored.length);
    expect(seqs(handedOn)).toEqual(oneTo(stored.length));
    expect(handedOn).toEqual(stored);
    expect(followed.failure).toBeUndefined();
  });

  it("refuses commands sent to B for A's session with session_owned_elsewhere naming A, and changes nothing", async () => {
    const { a, b } = await twoDaemons();
    await a.store.coordination!.advertise('http://daemon-a.test:7777');
    const { sessionId } = await a.runtime.openSession({ workspace: { kind: 'directory', path: workspace } });
    const { runId } = await a.runtime.submitTurn({ sessionId, input: text('one') });
    await a.runtime.waitForRun(runId);
    const before = await a.runtime.readEvents(sessionId, { limit: 10_000 });

    const refusals = [
      await agentErrorOf(b.runtime.submitTurn({ sessionId, input: text('two') })),
      await agentErrorOf(b.runtime.closeSession({ sessionId })),
      await agentErrorOf(b.runtime.deleteSession(sessionId)),
    ];
    for (const refusal of refusals) {
      expect(refusal).toMatchObject({
        code: 'session_owned_elsewhere',
        details: { ownerId: 'owner-a', ownerUrl: 'http://daemon-a.test:7777' },
      });
      expect(refusal.message).toContain('http://daemon-a.test:7777');
    }
    expect(await a.runtime.readEvents(sessionId, { limit: 10_000 })).toEqual(before);
    expect(b.provider.sessions).toHaveLength(0);
    // B reads it all the same, from the rows A writes.
    expect(await b.runtime.getSession(sessionId)).toMatchObject({ state: 'idle', lastSeq: before.length });
    // A still drives it.
    const next = await a.runtime.submitTurn({ sessionId, input: text('three') });
    expect(await a.runtime.waitForRun(next.runId)).toMatchObject({ outcome: 'succeeded' });
  });

  it("takes over A's open sessions within a sweep once A shuts down, and runs the next turn there", async () => {
    const { url, a, b } = await twoDaemons();
    const { sessionId } = await a.runtime.openSession({ workspace: { kind: 'directory', path: workspace } });
    const first = await a.runtime.submitTurn({ sessionId, input: text('one') });
    await a.runtime.waitForRun(first.runId);
    await a.runtime.shutdown();

    // B's sweep takes the lease (nothing is written: the session was left idle, its agent stopped).
    await expect
      .poll(
        async () =>
          (
            await query<{ owner_id: string }>(url, 'SELECT owner_id FROM session_leases WHERE session_id = $1', [
              sessionId,
            ])
          ).map((row) => row.owner_id),
        { timeout: 10 * leaseTtlMs, interval: 50 },
      )
      .toEqual(['owner-b']);
    const next = await b.runtime.submitTurn({ sessionId, input: text('two') });
    expect(await b.runtime.waitForRun(next.runId)).toMatchObject({ outcome: 'succeeded' });
    expect(b.provider.sessions).toHaveLength(1);
  });

  /** A's session with a turn running on A that never ends by itself, followed through B. */
  async function turnRunningOnA() {
    const { url, a, b } = await twoDaemons(async ({ runId, emit, session }) => {
      emit({
        type: 'session.provider_session_changed',
        providerSessionId: `conversation-${session.options.sessionId}`,
      });
      emit({ type: 'run.message_delta', runId, blockId: 'b:0', text: 'working' });
      // Stays running (as an agent mid-turn would) until its session stops.
      await new Promise(() => undefined);
    });
    const { sessionId } = await a.runtime.openSession({ workspace: { kind: 'directory', path: workspace } });
    const followed = follow(b.runtime, sessionId);
    const { runId } = await a.runtime.submitTurn({ sessionId, input: text('one') });
    await followed.waitFor((event) => event.type === 'run.message_delta' && event.text === 'working');
    return { url, a, b, sessionId, runId, followed };
  }

  it("ends a dead A's active run failed runtime_restarted once its lease expires, and the next turn succeeds on B", async () => {
    const { a, b, sessionId, runId, followed } = await turnRunningOnA();
    const ended = b.runtime.waitForRun(runId);
    a.link.cut();

    const run = await ended;
    expect(run).toMatchObject({ status: 'completed', outcome: 'failed', error: { code: 'runtime_restarted' } });
    expect(run.error?.message).toContain('process driving this session (a daemon or a tether command) stopped');
    await followed.waitFor((event) => event.type === 'run.completed' && event.runId === runId);

    // A's run was the conversation's first and never said where it stood (no checkpoint): its agent
    // may have written nothing to resume, so B starts the conversation anew (session-recovery.ts).
    const next = await b.runtime.submitTurn({ sessionId, input: text('two') });
    const completion = await followed.waitFor((event) => event.type === 'run.completed' && event.runId === next.runId);
    expect(completion).toMatchObject({ type: 'run.completed' });
    expect(b.provider.sessions[0]?.options.resumeProviderSessionId).toBeNull();
    const stored = await b.runtime.readEvents(sessionId, { limit: 10_000 });
    expect(seqs(stored)).toEqual(oneTo(stored.length));
    expect(seqs(followed.events.slice(0, stored.length))).toEqual(oneTo(stored.length));
  });

  it("a runtime that adopts no orphan (a CLI command) still recovers at start what its own owner id held: its data dir's process before a crash", async () => {
    const { url, a, b, sessionId, runId } = await turnRunningOnA();
    const other = await b.runtime.openSession({ workspace: { kind: 'directory', path: workspace } });
    a.link.cut();
    b.link.cut();
    // A's data dir again (its owner id), in a command that adopts no orphan: A's session is its own.
    const command = await startDaemon(url, 'owner-a', undefined, { adoptsOrphanedSessions: false });
    expect(await command.runtime.getRun(runId)).toMatchObject({
      outcome: 'failed',
      error: { code: 'runtime_restarted' },
    });
    expect(await holdersOf(url, [sessionId, other.sessionId])).toEqual(['owner-a', 'owner-b']);
  });

  it('refuses a stale A: its output is not written, its entry goes, and its next command is sent to B', async () => {
    const { a, b, sessionId, runId } = await turnRunningOnA();
    const ended = b.runtime.waitForRun(runId);
    a.link.cut();
    await ended;
    const atTakeover = await b.runtime.readEvents(sessionId, { limit: 10_000 });

    // A comes back, unaware, and its agent goes on with the run B ended.
    a.link.restore();
    const aAgent = a.provider.sessions[0]!;
    aAgent.emit({ type: 'run.message_delta', runId, blockId: 'b:0', text: 'stale output' });
    aAgent.emit({ type: 'run.completed', runId, outcome: 'succeeded' });
    // A stops its agent, forced (its output can no longer be written), once it finds the lease gone.
    await expect.poll(() => aAgent.stops, { timeout: 10 * leaseTtlMs, interval: 20 }).toContain('release');

    const refusal = await agentErrorOf(a.runtime.submitTurn({ sessionId, input: text('from A') }));
    expect(refusal).toMatchObject({ code: 'session_owned_elsewhere', details: { ownerId: 'owner-b' } });
    // B drives it: its next turn is stored right after the takeover, with nothing of A's in between.
    const next = await b.runtime.submitTurn({ sessionId, input: text('from B') });
    await b.runtime.waitForRun(next.runId);
    const stored = await b.runtime.readEvents(sessionId, { limit: 10_000 });
    expect(stored.slice(0, atTakeover.length)).toEqual(atTakeover);
    expect(seqs(stored)).toEqual(oneTo(stored.length));
    const afterTakeover = stored.slice(atTakeover.length);
    expect(afterTakeover[0]).toMatchObject({ type: 'run.started', runId: next.runId });
    expect(afterTakeover.some((event) => event.type === 'run.message_delta' && event.text === 'stale output')).toBe(
      false,
    );
  });

  it("keeps every live runtime's sessions where they are over a database outage they all shared, and takes a dead one's over after it", async () => {
    const url = await server().createDatabase();
    // Sweeping often, so a sweep surely runs between A's return and B's; a longer ttl than the
    // other tests', for B to come back well within it on a busy machine.
    const options = { sweepIntervalMs: 50, leaseTtlMs: 2_000 };
    const a = await startDaemon(url, 'owner-a', undefined, options);
    const b = await startDaemon(url, 'owner-b', undefined, options);
    const d = await startDaemon(url, 'owner-d', undefined, options);
    const warmSession = async (daemon: Daemon) => {
      const { sessionId } = await daemon.runtime.openSession({ workspace: { kind: 'directory', path: workspace } });
      // Its agent stays up after the turn, for the next one.
      const { runId } = await daemon.runtime.submitTurn({ sessionId, input: text('warm up') });
      await daemon.runtime.waitForRun(runId);
      return sessionId;
    };
    const onA = await warmSession(a);
    const onB = await warmSession(b);
    const onD = await warmSession(d);

    // The database is out of reach for everyone, longer than the ttl: every heartbeat is stale.
    for (const daemon of [a, b, d]) daemon.link.cut();
    await expect.poll(() => aliveRuntimes(url), { timeout: 15_000, interval: 50 }).toEqual([]);
    // A gets through first: it renews, and sweeps, while B (as alive as A) has not renewed yet.
    a.link.restore();
    await expect.poll(() => aliveRuntimes(url), { timeout: 10_000, interval: 10 }).toEqual(['owner-a']);

    const sweptBefore = a.sweeps();
    await expect.poll(() => a.sweeps(), { timeout: 10_000, interval: 10 }).toBeGreaterThan(sweptBefore);
    // B's session is still B's: a command for it on A is sent to B, and A's sweep left it alone.
    const refusal = await agentErrorOf(a.runtime.submitTurn({ sessionId: onB, input: text('mine now?') }));
    expect(refusal).toMatchObject({ code: 'session_owned_elsewhere', details: { ownerId: 'owner-b' } });
    b.link.restore();

    // D never comes back: its session is taken over all the same, about a ttl after A and B are back.
    await expect
      .poll(() => [...a.leaseChanges, ...b.leaseChanges], { timeout: 15_000, interval: 20 })
      .toContainEqual({ change: 'adopted', sessionId: onD });
    expect([...a.leaseChanges, ...b.leaseChanges]).toEqual([{ change: 'adopted', sessionId: onD }]);
    expect(await holdersOf(url, [onA, onB])).toEqual(['owner-a', 'owner-b']);
    // Their agents were never stopped.
    expect(a.provider.sessions.map((session) => session.stops)).toEqual([[]]);
    expect(b.provider.sessions.map((session) => session.stops)).toEqual([[]]);
    const next = await b.runtime.submitTurn({ sessionId: onB, input: text('still here') });
    expect(await b.runtime.waitForRun(next.runId)).toMatchObject({ outcome: 'succeeded' });
    expect(b.provider.sessions).toHaveLength(1);
  });

  it("ends the run at A's own followers as soon as A finds the session lost, from the store, with no gap and no duplicate", async () => {
    const { url, a, b } = await twoDaemons(async ({ runId, emit }) => {
      emit({ type: 'run.message_delta', runId, blockId: 'b:0', text: 'working' });
      await new Promise(() => undefined);
    });
    const { sessionId } = await a.runtime.openSession({ workspace: { kind: 'directory', path: workspace } });
    const atA = follow(a.runtime, sessionId);
    const { runId } = await a.runtime.submitTurn({ sessionId, input: text('slow') });
    await atA.waitFor((event) => event.type === 'run.message_delta' && event.text === 'working');
    // A session B drives, followed through A too: notices reach A in commit order, so once A hands
    // on a later event of it, A has heard every notice committed before.
    const barrier = (await b.runtime.openSession({ workspace: { kind: 'directory', path: workspace } })).sessionId;
    const barrierAtA = follow(a.runtime, barrier);
    await barrierAtA.waitFor((event) => event.type === 'session.opened');

    // A stops renewing (stuck), still hearing notices; B takes the session over and ends the run.
    const ended = b.runtime.waitForRun(runId);
    const resume = await stallHeartbeat(url, 'owner-a');
    expect(await ended).toMatchObject({ outcome: 'failed', error: { code: 'runtime_restarted' } });
    await expect
      .poll(() => b.leaseChanges, { timeout: 10_000, interval: 20 })
      .toContainEqual({
        change: 'adopted',
        sessionId,
      });
    const turn = await b.runtime.submitTurn({ sessionId: barrier, input: text('after the takeover') });
    await barrierAtA.waitFor((event) => event.type === 'run.completed' && event.runId === turn.runId);
    // A heard of B's writes while it still took the session for its own: its follower has none of them yet.
    expect(atA.events.some((event) => event.type === 'run.completed')).toBe(false);

    // A renews again, finds the lease gone and gives the session up: its follower now follows the store.
    await resume();
    await expect
      .poll(() => a.leaseChanges, { timeout: 10_000, interval: 20 })
      .toEqual([{ change: 'lost', sessionIds: [sessionId], noticedBy: 'heartbeat' }]);
    const stored = await b.runtime.readEvents(sessionId, { limit: 10_000 });
    const last = stored.at(-1)!;
    expect(stored.some((event) => event.type === 'run.completed' && event.runId === runId)).toBe(true);
    // A's follower hands on the stored log up to its last event (the run's end), then the checks below.
    await atA.waitFor((event) => event.seq === last.seq);
    expect(seqs(atA.events)).toEqual(oneTo(stored.length));
    expect(atA.events).toEqual(stored);
    expect(atA.failure).toBeUndefined();
  });

  it('ends the followers of a deleted session on every runtime, a notice missed meanwhile or not', async () => {
    const { a, b } = await twoDaemons();
    const closedSession = async () => {
      const { sessionId } = await a.runtime.openSession({ workspace: { kind: 'directory', path: workspace } });
      await a.runtime.closeSession({ sessionId });
      return sessionId;
    };
    const first = await closedSession();
    const second = await closedSession();
    const firstAtB = follow(b.runtime, first);
    const secondAtB = follow(b.runtime, second);
    await firstAtB.waitFor((event) => event.type === 'session.closed');
    await secondAtB.waitFor((event) => event.type === 'session.closed');

    await a.runtime.deleteSession(first);
    await expect
      .poll(() => firstAtB.failure, { timeout: 5_000, interval: 10 })
      .toMatchObject({
        code: 'session_not_found',
      });
    expect(secondAtB.failure).toBeUndefined();

    // Deleted while B's notice connection is down: B finds it gone when it listens again (resync).
    b.link.cut();
    await a.runtime.deleteSession(second);
    b.link.restore();
    await expect
      .poll(() => secondAtB.failure, { timeout: 10_000, interval: 10 })
      .toMatchObject({
        code: 'session_not_found',
      });
    expect(await agentErrorOf(b.runtime.getSession(second))).toMatchObject({ code: 'session_not_found' });
  });
});
