import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { ProtocolEvent, SessionSnapshot } from '@tether/protocol';
import { agentErrorOf, collectUntil, createMockProvider } from '@tether/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createInMemoryStore } from '../store/in-memory-store.js';
import { newestFirst } from '../store/session-order.js';
import type { TetherStore } from '../store/tether-store.js';
import { createAgentRuntime } from './agent-runtime.js';
import type { AgentRuntime } from './runtime-types.js';

let workspace: string;
beforeEach(async () => {
  workspace = await mkdtemp(path.join(os.tmpdir(), 'tether-closed-sessions-'));
});
afterEach(async () => {
  await rm(workspace, { recursive: true, force: true });
});

/** Opens `count` sessions, one turn each, and closes them; their ids in the order opened. */
async function closedSessions(runtime: AgentRuntime, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let index = 0; index < count; index += 1) {
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: workspace } });
    const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: `turn ${index}` }] });
    await runtime.waitForRun(runId);
    await runtime.closeSession({ sessionId });
    ids.push(sessionId);
  }
  return ids;
}

/** What a caller sees of a session, without what differs between two sessions (ids, times). */
function observable(snapshot: SessionSnapshot) {
  return {
    state: snapshot.state,
    lastSeq: snapshot.lastSeq,
    pendingInteractions: snapshot.pendingInteractions.length,
    title: snapshot.title,
    lastRun: snapshot.lastRun?.outcome,
  };
}

const types = (events: readonly ProtocolEvent[]) => events.map((event) => `${event.seq} ${event.type}`);

/** A store that counts the reads of single sessions (how a closed session comes back into memory). */
function countingStore(): { store: TetherStore; sessionReads: () => number } {
  const store = createInMemoryStore();
  let reads = 0;
  const getSession = store.getSession.bind(store);
  return {
    store: Object.assign(store, {
      getSession: (sessionId: string) => {
        reads += 1;
        return getSession(sessionId);
      },
    }),
    sessionReads: () => reads,
  };
}

describe('closed sessions beyond the cache', () => {
  it('are listed, read, reopened and deleted as if they had stayed in memory', async () => {
    const { store, sessionReads } = countingStore();
    const runtime = await createAgentRuntime({ providers: [createMockProvider()], store, closedSessionCacheSize: 2 });
    const ids = await closedSessions(runtime, 8);
    const [oldest, second] = ids as [string, string];

    const listed = await runtime.listSessions();
    // Newest first; two sessions opened in the same millisecond are ordered by id.
    const newestFirstIds = [...listed].sort(newestFirst).map((session) => session.sessionId);
    expect(new Set(newestFirstIds)).toEqual(new Set(ids));
    expect(listed.map((session) => session.sessionId)).toEqual(newestFirstIds);
    expect(listed.every((session) => session.state === 'closed')).toBe(true);
    expect(await runtime.countSessionsByState()).toEqual({ idle: 0, running: 0, waiting: 0, closed: 8 });

    const snapshot = await runtime.getSession(oldest);
    expect(observable(snapshot)).toEqual({
      state: 'closed',
      lastSeq: 5,
      pendingInteractions: 0,
      title: 'turn 0',
      lastRun: 'succeeded',
    });
    const history = await runtime.readEvents(oldest);
    expect(types(history)).toEqual([
      '1 session.opened',
      '2 run.started',
      '3 run.message_delta',
      '4 run.completed',
      '5 session.closed',
    ]);
    expect(await collectUntil(runtime, oldest, (event) => event.seq === 5)).toEqual(history);

    const readsBefore = sessionReads();
    await runtime.openSession({ continueSession: oldest });
    expect(sessionReads(), 'the closed session was read back from the store').toBeGreaterThan(readsBefore);
    const { runId } = await runtime.submitTurn({ sessionId: oldest, input: [{ type: 'text', text: 'again' }] });
    await runtime.waitForRun(runId);
    expect(types(await runtime.readEvents(oldest, { afterSeq: 5 }))).toEqual([
      '6 session.opened',
      '7 run.started',
      '8 run.message_delta',
      '9 run.completed',
    ]);
    expect(await runtime.countSessionsByState()).toEqual({ idle: 1, running: 0, waiting: 0, closed: 7 });
    expect((await runtime.listSessions({ state: 'idle' })).map((session) => session.sessionId)).toEqual([oldest]);

    await runtime.deleteSession(second);
    expect((await agentErrorOf(runtime.getSession(second))).code).toBe('session_not_found');
    expect((await agentErrorOf(runtime.readEvents(second))).code).toBe('session_not_found');
    expect((await agentErrorOf(collectUntil(runtime, second, () => true))).code).toBe('session_not_found');
    expect((await agentErrorOf(runtime.openSession({ continueSession: second }))).code).toBe('session_not_found');
    expect((await agentErrorOf(runtime.deleteSession(second))).code).toBe('session_not_found');
    expect((await agentErrorOf(runtime.deleteSession(oldest))).code).toBe('session_open');
    expect((await runtime.listSessions()).map((session) => session.sessionId)).toEqual(
      newestFirstIds.filter((id) => id !== second),
    );
    await runtime.shutdown();
  });

  it('take concurrent commands and reads on one session as a resident session does', async () => {
    /** Reopens, reads and closes one closed session all at once; what a caller sees afterwards. */
    async function concurrently(closedSessionCacheSize: number) {
      const runtime = await createAgentRuntime({ providers: [createMockProvider()], closedSessionCacheSize });
      const [sessionId] = (await closedSessions(runtime, 4)) as [string];
      const [reopened, during, events, again] = await Promise.all([
        runtime.openSession({ continueSession: sessionId }),
        runtime.getSession(sessionId),
        runtime.readEvents(sessionId),
        runtime.openSession({ continueSession: sessionId }),
      ]);
      expect(reopened.sessionId).toBe(sessionId);
      expect(again.sessionId).toBe(sessionId);
      const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'after the reopen' }] });
      await runtime.waitForRun(runId);
      await Promise.all([
        runtime.closeSession({ sessionId }),
        runtime.getSession(sessionId),
        runtime.closeSession({ sessionId }),
      ]);
      const seen = {
        during: observable(during),
        events: types(events),
        after: observable(await runtime.getSession(sessionId)),
        log: types(await runtime.readEvents(sessionId)),
      };
      await runtime.shutdown();
      return seen;
    }
    const resident = await concurrently(100);
    const evicted = await concurrently(0);
    expect(evicted).toEqual(resident);
    expect(evicted.after.state).toBe('closed');
  });
});
