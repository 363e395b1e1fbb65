import type { ProtocolEvent } from '@tether/protocol';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import {
  type FakeWorkspaceAcquirer,
  type MockTurnScript,
  agentErrorOf,
  createFakeWorkspaceAcquirer,
  createMockProvider,
  replyWithCheckpoint,
} from '@tether/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { runtimePerTest } from './runtime-per-test.test-helper.js';
import { SharedStoreDouble } from './shared-store.test-helper.js';
import { createAgentRuntime } from './agent-runtime.js';
import { followUntil } from './follow-until.test-helper.js';
import type { AgentRuntime, LeaseChange } from './runtime-types.js';
import type { TetherStore } from '../store/tether-store.js';

// The runtime's side of sharing a store, over a double of the store layer (store-postgres's
// runtimes-sharing.test.ts runs the same over a real PostgreSQL).
const test = runtimePerTest('tether-sharing-');
const running: AgentRuntime[] = [];

async function start(
  shared: SharedStoreDouble,
  ownerId: string,
  turn?: MockTurnScript,
  acquirer?: FakeWorkspaceAcquirer,
  options: { adoptsOrphanedSessions?: boolean } = {},
  wrap: (store: TetherStore) => TetherStore = (store) => store,
) {
  const provider = createMockProvider({ capabilities: { fork: true }, ...(turn ? { turn } : {}) });
  const store = wrap(shared.storeFor(ownerId));
  const leaseChanges: LeaseChange[] = [];
  const runtime = await createAgentRuntime({
    providers: [provider],
    store,
    onLeaseChange: (change) => leaseChanges.push(change),
    ...(acquirer ? { workspaces: [acquirer] } : {}),
    ...options,
  });
  running.push(runtime);
  return { runtime, provider, store, leaseChanges };
}

afterEach(async () => {
  await Promise.all(running.splice(0).map((runtime) => runtime.shutdown({ force: true })));
});

/** Two runtimes sharing a store and a worktree acquirer; a worktree session on A with one turn done. */
async function worktreeSessionOnA() {
  const shared = new SharedStoreDouble();
  const root = path.join(test.workspace, 'worktrees');
  await mkdir(root);
  const acquirer = createFakeWorkspaceAcquirer({ root });
  const a = await start(shared, 'owner-a', replyWithCheckpoint('done'), acquirer);
  const b = await start(shared, 'owner-b', replyWithCheckpoint('done'), acquirer);
  const workspace = { kind: 'git_worktree' as const, repository: test.workspace };
  const { sessionId } = await a.runtime.openSession({ workspace });
  await a.runtime.waitForRun((await a.runtime.submitTurn({ sessionId, input: text('work') })).runId);
  return { acquirer, a, b, sessionId };
}

/** A's session with a run that never ends by itself, taken over by B once A stalls (B ended the run). */
async function takenOverFromStalledA(shared: SharedStoreDouble) {
  const a = await start(shared, 'owner-a', () => new Promise(() => undefined));
  const { sessionId } = await a.runtime.openSession({ workspace: { kind: 'directory', path: test.workspace } });
  const { runId } = await a.runtime.submitTurn({ sessionId, input: text('go') });
  const b = await start(shared, 'owner-b');
  const ended = b.runtime.waitForRun(runId);
  shared.stall('owner-a');
  return { a, b, sessionId, runId, ended: await ended };
}

/** A's session with a run that never ends by itself, A stalled (an orphan), and a command's runtime that adopts no orphan. */
async function orphanBesideACommand() {
  const shared = new SharedStoreDouble();
  const a = await start(shared, 'owner-a', () => new Promise(() => undefined));
  const { sessionId } = await a.runtime.openSession({ workspace: { kind: 'directory', path: test.workspace } });
  const { runId } = await a.runtime.submitTurn({ sessionId, input: text('go') });
  shared.stall('owner-a');
  const command = await start(shared, 'owner-command', undefined, undefined, { adoptsOrphanedSessions: false });
  return { shared, sessionId, runId, command };
}

const text = (value: string) => [{ type: 'text' as const, text: value }];
const seqs = (events: readonly ProtocolEvent[]) => events.map((event) => event.seq);
const oneTo = (last: number) => Array.from({ length: last }, (_, index) => index + 1);

describe('a runtime sharing its store with others', () => {
  it("refuses commands on another runtime's session (session_owned_elsewhere, nothing changed) and skips it at start-up", async () => {
    const shared = new SharedStoreDouble();
    const a = await start(shared, 'owner-a');
    await a.store.coordination!.advertise('http://daemon-a.test:7777');
    const { sessionId } = await a.runtime.openSession({ workspace: { kind: 'directory', path: test.workspace } });
    const b = await start(shared, 'owner-b');
    const before = await a.runtime.readEvents(sessionId);
    const refusal = await agentErrorOf(b.runtime.submitTurn({ sessionId, input: text('hi') }));
    expect(refusal).toMatchObject({
      code: 'session_owned_elsewhere',
      details: { ownerId: 'owner-a', ownerUrl: 'http://daemon-a.test:7777' },
    });
    expect(await a.runtime.readEvents(sessionId)).toEqual(before);
    expect(shared.leases.get(sessionId)?.ownerId).toBe('owner-a');
    expect(b.provider.sessions).toHaveLength(0);
    // Listed and read there all the same (an open session of another runtime, from its row).
    expect((await b.runtime.listSessions()).map((session) => session.sessionId)).toEqual([sessionId]);
    expect(await b.runtime.countSessionsByState()).toMatchObject({ idle: 1, closed: 0 });
  });

  it("hands another runtime's events to followers and run waiters in order, but not to observers", async () => {
    const shared = new SharedStoreDouble();
    const a = await start(shared, 'owner-a', async ({ runId, emit }) => {
      for (let index = 0; index < 30; index += 1) {
        emit({ type: 'run.message_delta', runId, blockId: 'b:0', text: `${index} ` });
        await new Promise((resolve) => setImmediate(resolve));
      }
      emit({ type: 'run.completed', runId, outcome: 'succeeded' });
    });
    const b = await start(shared, 'owner-b');
    const observed: ProtocolEvent[] = [];
    b.runtime.observe((event) => observed.push(event));
    const { sessionId } = await a.runtime.openSession({ workspace: { kind: 'directory', path: test.workspace } });
    const followed = followUntil(b.runtime, sessionId, 0, (event) => event.type === 'run.completed');
    const { runId } = await a.runtime.submitTurn({ sessionId, input: text('go') });
    expect(await b.runtime.waitForRun(runId)).toMatchObject({ outcome: 'succeeded' });
    const events = await followed;
    expect(seqs(events)).toEqual(oneTo(events.length));
    expect(events).toEqual(await a.runtime.readEvents(sessionId, { limit: events.length }));
    expect(observed).toEqual([]);
  });

  it('catches followers up from the store after a resync, when notices were missed', async () => {
    const shared = new SharedStoreDouble();
    const a = await start(shared, 'owner-a');
    const b = await start(shared, 'owner-b');
    const { sessionId } = await a.runtime.openSession({ workspace: { kind: 'directory', path: test.workspace } });
    const first = await a.runtime.submitTurn({ sessionId, input: text('one') });
    const followed = followUntil(
      b.runtime,
      sessionId,
      0,
      (event) => event.type === 'run.completed' && event.runId !== first.runId,
    );
    await b.runtime.waitForRun(first.runId);
    shared.muted = true;
    const second = await a.runtime.submitTurn({ sessionId, input: text('two') });
    await a.runtime.waitForRun(second.runId);
    shared.muted = false;
    shared.resync();
    const events = await followed;
    expect(events.at(-1)).toMatchObject({ type: 'run.completed', runId: second.runId });
    expect(seqs(events)).toEqual(oneTo(events.length));
  });

  it("takes a stalled runtime's session over in a sweep, ending its run runtime_restarted; the stale one drops it", async () => {
    const shared = new SharedStoreDouble();
    const { a, b, sessionId, ended } = await takenOverFromStalledA(shared);
    expect(ended).toMatchObject({ outcome: 'failed', error: { code: 'runtime_restarted' } });
    expect(shared.leases.get(sessionId)?.ownerId).toBe('owner-b');
    // Told once the adoption (claim, load, recovery) has ended, just after the run's end was stored.
    await expect.poll(() => b.leaseChanges).toEqual([{ change: 'adopted', sessionId }]);

    shared.heartbeat('owner-a');
    // The stale runtime's agent is stopped at once, forced: its output can no longer be written.
    await expect.poll(() => a.provider.sessions[0]?.stops).toEqual(['release']);
    expect(a.leaseChanges).toEqual([{ change: 'lost', sessionIds: [sessionId], noticedBy: 'heartbeat' }]);
    const refusal = await agentErrorOf(a.runtime.submitTurn({ sessionId, input: text('again') }));
    expect(refusal).toMatchObject({ code: 'session_owned_elsewhere', details: { ownerId: 'owner-b' } });
    const next = await b.runtime.submitTurn({ sessionId, input: text('there') });
    expect(await b.runtime.waitForRun(next.runId)).toMatchObject({ outcome: 'succeeded' });
  });

  it('not adopting (a CLI command), leaves a session no runtime drives to one that adopts, at start and after', async () => {
    const { shared, sessionId, runId, command } = await orphanBesideACommand();
    // Its start-up took nothing; a runtime that adopts (a daemon) takes the session up and ends the run.
    expect(shared.leases.get(sessionId)?.ownerId).toBe('owner-a');
    const daemon = await start(shared, 'owner-daemon');
    expect(await daemon.runtime.waitForRun(runId)).toMatchObject({
      outcome: 'failed',
      error: { code: 'runtime_restarted' },
    });
    expect(shared.leases.get(sessionId)?.ownerId).toBe('owner-daemon');
    expect(command.leaseChanges).toEqual([]);
    // The command still sees the session, and is told who drives it.
    expect((await command.runtime.listSessions()).map((session) => session.sessionId)).toEqual([sessionId]);
    const refusal = await agentErrorOf(command.runtime.submitTurn({ sessionId, input: text('mine?') }));
    expect(refusal).toMatchObject({ code: 'session_owned_elsewhere', details: { ownerId: 'owner-daemon' } });
  });

  it('not adopting, takes up a session no runtime drives when a command asks for it', async () => {
    const { shared, sessionId, runId, command } = await orphanBesideACommand();
    const next = await command.runtime.submitTurn({ sessionId, input: text('go on') });
    expect(await command.runtime.waitForRun(runId)).toMatchObject({
      outcome: 'failed',
      error: { code: 'runtime_restarted' },
    });
    expect(await command.runtime.waitForRun(next.runId)).toMatchObject({ outcome: 'succeeded' });
    expect(shared.leases.get(sessionId)?.ownerId).toBe('owner-command');
  });

  it('drops a session whose commit is refused for a lost lease without retrying it, and refuses its next command', async () => {
    const shared = new SharedStoreDouble();
    const { a, b, sessionId, runId } = await takenOverFromStalledA(shared);
    const afterTakeover = await b.runtime.readEvents(sessionId);

    // A's agent goes on, unaware; its heartbeat has not noticed yet.
    const agent = a.provider.sessions[0]!;
    agent.emit({ type: 'run.message_delta', runId, blockId: 'b:0', text: 'stale' });
    await expect.poll(() => agent.stops).toEqual(['release']);
    agent.emit({ type: 'run.message_delta', runId, blockId: 'b:0', text: 'later' });
    expect(shared.refused).toEqual([{ ownerId: 'owner-a', sessionIds: [sessionId] }]);
    // Told once: the heartbeat noticing the same loss later says nothing more.
    shared.heartbeat('owner-a');
    expect(a.leaseChanges).toEqual([{ change: 'lost', sessionIds: [sessionId], noticedBy: 'refused_commit' }]);
    expect(await b.runtime.readEvents(sessionId)).toEqual(afterTakeover);
    const refusal = await agentErrorOf(a.runtime.interruptRun({ sessionId }));
    expect(refusal).toMatchObject({ code: 'session_owned_elsewhere', details: { ownerId: 'owner-b' } });
  });

  it('tells a loss once, however many of the writes queued before it are refused after', async () => {
    const shared = new SharedStoreDouble();
    const heldCommits: (() => void)[] = [];
    let holding = false;
    const holdable = (store: TetherStore): TetherStore => {
      const wrapped = Object.create(store) as TetherStore & { commit: TetherStore['commit'] };
      wrapped.commit = async (unit) => {
        if (holding) await new Promise<void>((resolve) => heldCommits.push(resolve));
        return store.commit(unit);
      };
      return wrapped;
    };
    const a = await start(shared, 'owner-a', () => new Promise(() => undefined), undefined, {}, holdable);
    const { sessionId } = await a.runtime.openSession({ workspace: { kind: 'directory', path: test.workspace } });
    const { runId } = await a.runtime.submitTurn({ sessionId, input: text('go') });
    const agent = a.provider.sessions[0]!;
    // Two of A's writes queue while its store does not answer (a connection cut).
    holding = true;
    agent.emit({ type: 'run.message_delta', runId, blockId: 'b:0', text: 'one' });
    await expect.poll(() => heldCommits.length).toBe(1);
    agent.emit({ type: 'run.completed', runId, outcome: 'succeeded' });
    // Meanwhile B takes the session over, and A's heartbeat notices the loss.
    const b = await start(shared, 'owner-b');
    shared.stall('owner-a');
    await expect.poll(() => shared.leases.get(sessionId)?.ownerId).toBe('owner-b');
    shared.heartbeat('owner-a');
    expect(a.leaseChanges).toEqual([{ change: 'lost', sessionIds: [sessionId], noticedBy: 'heartbeat' }]);
    holding = false;
    for (const release of heldCommits.splice(0)) release();
    await expect.poll(() => shared.refused.length).toBeGreaterThanOrEqual(1);
    await b.runtime.getSession(sessionId);
    expect(a.leaseChanges).toEqual([{ change: 'lost', sessionIds: [sessionId], noticedBy: 'heartbeat' }]);
  });

  it('writes the other sessions of a background unit refused for one lost lease, at once', async () => {
    const shared = new SharedStoreDouble();
    const a = await start(shared, 'owner-a', () => new Promise(() => undefined));
    const workspace = { kind: 'directory' as const, path: test.workspace };
    const lost = (await a.runtime.openSession({ workspace })).sessionId;
    const kept = (await a.runtime.openSession({ workspace })).sessionId;
    const lostRun = await a.runtime.submitTurn({ sessionId: lost, input: text('go') });
    const keptRun = await a.runtime.submitTurn({ sessionId: kept, input: text('go') });
    // Another runtime took `lost` alone (its fencing token raised); A has not noticed.
    shared.leases.set(lost, { ownerId: 'owner-b', token: 2 });
    const [lostAgent, keptAgent] = a.provider.sessions;
    // Staged in the same tick: one background unit.
    lostAgent!.emit({ type: 'run.message_delta', runId: lostRun.runId, blockId: 'b:0', text: 'not mine' });
    keptAgent!.emit({ type: 'run.message_delta', runId: keptRun.runId, blockId: 'b:0', text: 'mine' });
    await expect.poll(() => lostAgent!.stops).toEqual(['release']);
    await expect
      .poll(async () => (await a.runtime.readEvents(kept)).some((event) => event.type === 'run.message_delta'))
      .toBe(true);
    expect(shared.refused).toEqual([{ ownerId: 'owner-a', sessionIds: [lost] }]);
    expect((await a.runtime.readEvents(lost)).some((event) => event.type === 'run.message_delta')).toBe(false);
    expect(keptAgent!.stops).toEqual([]);
    expect(await a.runtime.getSession(kept)).toMatchObject({ state: 'running', activeRunId: keptRun.runId });
  });

  it('lets a closed session leave memory at once and gives its lease back, for any runtime to reopen', async () => {
    const shared = new SharedStoreDouble();
    const a = await start(shared, 'owner-a');
    const { sessionId } = await a.runtime.openSession({ workspace: { kind: 'directory', path: test.workspace } });
    await a.runtime.closeSession({ sessionId });
    expect(shared.leases.has(sessionId)).toBe(false);
    const b = await start(shared, 'owner-b');
    await b.runtime.openSession({ continueSession: sessionId });
    expect(shared.leases.get(sessionId)?.ownerId).toBe('owner-b');
    const { runId } = await b.runtime.submitTurn({ sessionId, input: text('back') });
    expect(await b.runtime.waitForRun(runId)).toMatchObject({ outcome: 'succeeded' });
  });

  it('claims a new session before its first commit', async () => {
    const shared = new SharedStoreDouble();
    const a = await start(shared, 'owner-a');
    const { sessionId } = await a.runtime.openSession({ workspace: { kind: 'directory', path: test.workspace } });
    expect(shared.leases.get(sessionId)).toEqual({ ownerId: 'owner-a', token: 1 });
  });

  it("keeps a worktree that a session open on another runtime works in (a fork reopened there) at its source's close", async () => {
    const { acquirer, a, b, sessionId } = await worktreeSessionOnA();
    const { forkSessionId } = await a.runtime.forkSession({ sessionId });
    await a.runtime.closeSession({ sessionId: forkSessionId });
    await b.runtime.openSession({ continueSession: forkSessionId });
    // A holds no open session there any more: only the store knows the fork is open, on B.
    await a.runtime.closeSession({ sessionId });
    expect(acquirer.calls.filter((call) => call.step === 'release').map((call) => call.release?.inUse)).toEqual([
      true,
      true,
    ]);
    expect((await a.runtime.getSession(sessionId)).workspaceStatus).toMatchObject({
      state: 'kept',
      keptBecause: 'in_use',
    });
  });

  it('tells a closed fork, out of memory as every closed session is here, what became of the worktree; a delete on another runtime leaves it to the fork', async () => {
    const { acquirer, a, b, sessionId } = await worktreeSessionOnA();
    const directory = (await a.runtime.getSession(sessionId)).workspaceStatus!.directory;
    const { forkSessionId } = await a.runtime.forkSession({ sessionId });
    await a.runtime.closeSession({ sessionId: forkSessionId });
    acquirer.setWork(directory, 'uncommitted_changes');
    await a.runtime.closeSession({ sessionId });

    const kept = { directory, state: 'kept', keptBecause: 'uncommitted_changes' };
    expect((await b.runtime.getSession(forkSessionId)).workspaceStatus).toMatchObject(kept);
    const sourceEvents = await b.runtime.readEvents(sessionId);
    expect(sourceEvents.filter((event) => event.type === 'diagnostic')).toEqual([]);
    expect(await b.runtime.deleteSession(sessionId, { discardWorkspaceChanges: true })).toMatchObject({
      sessionId,
      workspaceStatus: { state: 'kept', keptBecause: 'in_use' },
    });
    expect((await b.runtime.getSession(forkSessionId)).workspaceStatus).toMatchObject(kept);
    expect(await a.runtime.deleteSession(forkSessionId, { discardWorkspaceChanges: true })).toMatchObject({
      sessionId: forkSessionId,
      workspaceStatus: { state: 'removed' },
    });
    expect(acquirer.calls.filter((call) => call.step === 'release').map((call) => call.release)).toEqual([
      { discardChanges: false, inUse: true },
      { discardChanges: false, inUse: false },
      { discardChanges: true, forDelete: true, inUse: true },
      { discardChanges: true, forDelete: true, inUse: false },
    ]);
  });
});
