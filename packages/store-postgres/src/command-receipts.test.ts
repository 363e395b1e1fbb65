import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Command, OpenSessionCommand, OpenSessionReceipt, SubmitTurnReceipt } from '@tether/protocol';
import { type AgentRuntime, type StoredReceipt, type TetherStore, createAgentRuntime } from '@tether/runtime';
import {
  type FakeWorkspaceAcquirer,
  type MockProvider,
  agentErrorOf,
  createFakeWorkspaceAcquirer,
  createMockProvider,
} from '@tether/testkit';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { query } from './__fixtures__/database-fixtures.js';
import { useTestServer } from './__fixtures__/test-server.js';
import { commitOutcome } from './commit-outcome.js';
import { openPostgresStore } from './index.js';
import { waitingBehind } from './test-support.js';

// One command (one commandId) sent to two runtimes sharing a database, as a client retrying through a
// load balancer does: exactly one of them carries it out, and both answer with its receipt.
const server = useTestServer();

interface Daemon {
  readonly ownerId: string;
  readonly runtime: AgentRuntime;
  readonly store: TetherStore;
  readonly provider: MockProvider;
  readonly acquirer: FakeWorkspaceAcquirer;
}

const started: Daemon[] = [];
const holders: pg.Client[] = [];
let workspace = '';

beforeEach(async () => {
  workspace = await mkdtemp(path.join(os.tmpdir(), 'tether-receipts-'));
});

afterEach(async () => {
  await Promise.all(holders.splice(0).map((holder) => holder.end().catch(() => undefined)));
  await Promise.all(started.splice(0).map((daemon) => daemon.runtime.shutdown({ force: true })));
  await rm(workspace, { recursive: true, force: true });
});

/** A runtime as a daemon runs it, on the database at `url`; `wrap` may stand between it and its store. */
async function startDaemon(
  url: string,
  ownerId: string,
  wrap: (store: TetherStore) => TetherStore = (store) => store,
): Promise<Daemon> {
  const store = await openPostgresStore({ url, ownerId, leaseTtlMs: 1_000, maxConnections: 4 });
  const root = path.join(workspace, `worktrees-${ownerId}`);
  await mkdir(root);
  const acquirer = createFakeWorkspaceAcquirer({ root });
  const provider = createMockProvider({ start: () => undefined });
  const runtime = await createAgentRuntime({ providers: [provider], store: wrap(store), workspaces: [acquirer] });
  const daemon = { ownerId, runtime, store, provider, acquirer };
  started.push(daemon);
  return daemon;
}

/**
 * Holds every write to the receipts table (a SHARE lock, in a transaction of the test's own), so
 * commits carrying a receipt wait inside their transactions, each past its receipt lookup, until
 * `release`: then they go on at the same moment.
 */
async function holdReceipts(url: string) {
  const holder = new pg.Client({ connectionString: url });
  holders.push(holder);
  await holder.connect();
  await holder.query('BEGIN');
  await holder.query('LOCK TABLE receipts IN SHARE MODE');
  return {
    /** Resolves once `count` transactions wait for the lock. */
    async waiting(count: number): Promise<void> {
      await expect.poll(() => waitingBehind(holder), { timeout: 10_000, interval: 20 }).toBe(count);
    },
    async release(): Promise<void> {
      await holder.query('COMMIT');
    },
  };
}

/** A promise the test settles. */
function gate(): { opened: Promise<void>; open(): void; readonly isOpen: boolean } {
  let resolve = () => {};
  let isOpen = false;
  const opened = new Promise<void>((settle) => {
    resolve = settle;
  });
  return {
    opened,
    open() {
      isOpen = true;
      resolve();
    },
    get isOpen() {
      return isOpen;
    },
  };
}

function openCommand(commandId: string, branch?: string): OpenSessionCommand {
  return {
    type: 'open_session',
    commandId,
    workspace: { kind: 'git_worktree', repository: workspace, ...(branch ? { branch } : {}) },
    startAgent: true,
  };
}

async function sessionIdsOf(runtime: AgentRuntime): Promise<string[]> {
  return (await runtime.listSessions()).map((session) => session.sessionId);
}

async function leaseHolders(url: string): Promise<{ session_id: string; owner_id: string }[]> {
  return query(url, 'SELECT session_id, owner_id FROM session_leases ORDER BY session_id');
}

/** The runtime whose open_session was stored (it holds the session), and the other one. */
async function winnerAndLoser(url: string, sessionId: string, daemons: Daemon[]): Promise<[Daemon, Daemon]> {
  // The other runtime gives back the lease it claimed for its own session (in the background).
  await expect.poll(() => leaseHolders(url), { timeout: 10_000, interval: 20 }).toHaveLength(1);
  const [lease] = await leaseHolders(url);
  expect(lease?.session_id).toBe(sessionId);
  const winner = daemons.find((daemon) => daemon.ownerId === lease?.owner_id)!;
  const loser = daemons.find((daemon) => daemon !== winner)!;
  return [winner, loser];
}

/**
 * A command sent to the runtime that drives a session (A) and, by a client retrying, to another (B)
 * at the same time: B looks for its receipt first (none yet) and is held there while A carries the
 * command out and then goes away (shut down: its leases given back); B then takes the session over
 * and goes on with the command.
 */
async function sentAlsoToTheNextHolder(commandFor: (sessionId: string) => Command) {
  const url = await server().createDatabase();
  const a = await startDaemon(url, 'owner-a');
  const { sessionId } = await a.runtime.openSession({ workspace: { kind: 'directory', path: workspace } });
  const command = commandFor(sessionId);
  const looked = gate();
  const resume = gate();
  const b = await startDaemon(url, 'owner-b', (store) => ({
    ...store,
    findReceipt: async (commandId) => {
      const found = await store.findReceipt(commandId);
      if (commandId === command.commandId && found === undefined && !looked.isOpen) {
        looked.open();
        await resume.opened;
      }
      return found;
    },
  }));

  const onB = b.runtime.dispatch(command);
  await looked.opened;
  const fromA = await a.runtime.dispatch(command);
  if (fromA.type === 'submit_turn') await a.runtime.waitForRun(fromA.runId);
  await a.runtime.shutdown();
  resume.open();
  const fromB = await onB;
  return { a, b, fromA, fromB, sessionId };
}

describe('a command sent to two runtimes sharing a database', () => {
  it('opens one session when the same open_session reaches both at once; both callers get its receipt', async () => {
    const url = await server().createDatabase();
    const a = await startDaemon(url, 'owner-a');
    const b = await startDaemon(url, 'owner-b');
    const command = openCommand('cmd-open-once');

    const held = await holdReceipts(url);
    const answers = [a.runtime.dispatch(command), b.runtime.dispatch(command)];
    // Both commits are in flight, both past their receipt lookup: neither found the other's.
    await held.waiting(2);
    await held.release();
    const [fromA, fromB] = (await Promise.all(answers)) as OpenSessionReceipt[];

    expect(fromB).toEqual(fromA);
    const { sessionId } = fromA!;
    expect(await sessionIdsOf(a.runtime)).toEqual([sessionId]);
    expect(await sessionIdsOf(b.runtime)).toEqual([sessionId]);
    expect((await a.store.loadSessions()).map((session) => session.sessionId)).toEqual([sessionId]);
    expect((await a.store.findReceipt(command.commandId))?.receipt).toEqual(fromA);
    expect(await a.runtime.readEvents(sessionId)).toEqual(await b.runtime.readEvents(sessionId));

    // The runtime whose commit was refused undid what it had started: its agent session was closed
    // (never started), its worktree released and removed. The other's agent starts, as asked.
    const [winner, loser] = await winnerAndLoser(url, sessionId, [a, b]);
    expect(loser.provider.sessions.map((session) => [session.starts, session.stops])).toEqual([[0, ['close']]]);
    expect(loser.acquirer.calls.map((call) => call.step)).toEqual(['prepare', 'release']);
    const loserDirectory = loser.acquirer.calls[0]!.subject;
    expect(existsSync(path.join(workspace, `worktrees-${loser.ownerId}`, loserDirectory))).toBe(false);
    await expect.poll(() => winner.provider.sessions.map((session) => session.starts)).toEqual([1]);
    expect(winner.acquirer.calls.map((call) => call.step)).toEqual(['prepare']);
    // Sent again to either, later: the same receipt, nothing more.
    expect(await loser.runtime.dispatch(command)).toEqual(fromA);
    expect(await winner.runtime.dispatch(command)).toEqual(fromA);
    expect(await sessionIdsOf(loser.runtime)).toEqual([sessionId]);
  });

  it('refuses with command_id_reused the other of two different commands sent at once with one commandId', async () => {
    const url = await server().createDatabase();
    const a = await startDaemon(url, 'owner-a');
    const b = await startDaemon(url, 'owner-b');

    const held = await holdReceipts(url);
    const answers = Promise.allSettled([
      a.runtime.dispatch(openCommand('cmd-shared-id', 'tether/from-a')),
      b.runtime.dispatch(openCommand('cmd-shared-id', 'tether/from-b')),
    ]);
    await held.waiting(2);
    await held.release();
    const settled = await answers;

    const kept = settled.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
    const refused = settled.flatMap((result) => (result.status === 'rejected' ? [result.reason] : []));
    expect(kept).toHaveLength(1);
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatchObject({ code: 'invalid_command', details: { reason: 'command_id_reused' } });
    const { sessionId } = kept[0] as OpenSessionReceipt;
    expect((await a.store.loadSessions()).map((session) => session.sessionId)).toEqual([sessionId]);
    expect((await b.store.findReceipt('cmd-shared-id'))?.receipt).toEqual(kept[0]);
    const [, loser] = await winnerAndLoser(url, sessionId, [a, b]);
    expect(loser.acquirer.calls.map((call) => call.step)).toEqual(['prepare', 'release']);
    expect(loser.provider.sessions.map((session) => session.stops)).toEqual([['close']]);
    expect(await sessionIdsOf(loser.runtime)).toEqual([sessionId]);
  });

  it("starts one run when a submit_turn carried out on the session's runtime reaches the runtime that takes it over", async () => {
    const turn = (text: string): Command => ({
      type: 'submit_turn',
      commandId: 'cmd-turn-once',
      sessionId,
      input: [{ type: 'text', text }],
    });
    let sessionId = '';
    const { a, b, fromA, fromB } = await sentAlsoToTheNextHolder((opened) => {
      sessionId = opened;
      return turn('once');
    });

    expect(fromB).toEqual(fromA);
    const { runId } = fromA as SubmitTurnReceipt;
    expect((await b.store.listRuns(sessionId)).map((run) => run.runId)).toEqual([runId]);
    expect((await b.store.findReceipt('cmd-turn-once'))?.receipt).toEqual(fromA);
    expect(a.provider.sessions.flatMap((session) => session.turns.map((started) => started.runId))).toEqual([runId]);
    expect(b.provider.sessions.flatMap((session) => session.turns)).toEqual([]);
    expect(await b.runtime.dispatch(turn('once'))).toEqual(fromA);
    // A different command under that id is still refused.
    const reused = await agentErrorOf(b.runtime.dispatch(turn('other')));
    expect(reused).toMatchObject({ code: 'invalid_command', details: { reason: 'command_id_reused' } });
  });

  it("asks the agent once when a set_permission_mode carried out on the session's runtime reaches the runtime that takes it over", async () => {
    const { a, b, fromA, fromB, sessionId } = await sentAlsoToTheNextHolder((opened) => ({
      type: 'set_permission_mode',
      commandId: 'cmd-mode-once',
      sessionId: opened,
      mode: 'plan',
    }));

    expect(fromB).toEqual(fromA);
    expect(a.provider.sessions.flatMap((session) => session.modes)).toEqual(['plan']);
    // The runtime that took the session over read the receipt once it held it: its agent was never started nor asked.
    expect(b.provider.sessions).toEqual([]);
    const events = await b.runtime.readEvents(sessionId);
    expect(events.filter((event) => event.type === 'session.mode_changed')).toHaveLength(1);
  });
});

describe('settling a lost answer to COMMIT of a unit that appends nothing', () => {
  it('takes it as stored when its receipts are stored as it carries them, and as not stored otherwise', async () => {
    const url = await server().createDatabase();
    const store = await openPostgresStore({ url, ownerId: 'owner-a' });
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    try {
      const receipt = (commandId: string, fingerprint = 'fingerprint'): StoredReceipt => ({
        commandId,
        fingerprint,
        receipt: {
          type: 'get_session_cost',
          commandId,
          sessionId: `ses_${'a'.repeat(32)}`,
          costUsd: null,
          report: 'cost',
        },
        at: '2026-12-01T00:00:00.000Z',
      });
      await store.commit({
        events: [],
        sessions: [],
        runs: [],
        interactions: [],
        receipts: [receipt('cmd-stored')],
        blobs: [],
      });

      expect(await commitOutcome(pool, [], [receipt('cmd-stored')])).toBe('committed');
      expect(await commitOutcome(pool, [], [receipt('cmd-unknown')])).toBe('not_committed');
      // Stored by another runtime's unit: not this one's (run again, it is refused receipt_exists).
      expect(await commitOutcome(pool, [], [receipt('cmd-stored', 'another')])).toBe('not_committed');
      expect(await commitOutcome(pool, [], [receipt('cmd-stored'), receipt('cmd-unknown')])).toBe('not_committed');
      expect(await commitOutcome(pool, [], [])).toBe('not_committed');
    } finally {
      await pool.end();
      await store.close();
    }
  });
});
