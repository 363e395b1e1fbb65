import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { ProtocolEvent } from '@tether/protocol';
import { createMockProvider } from '@tether/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createInMemoryStore } from '../store/in-memory-store.js';
import { createAgentRuntime } from './agent-runtime.js';
import { followUntil } from './follow-until.test-helper.js';
import { SharedStoreDouble } from './shared-store.test-helper.js';

let workspace: string;

beforeEach(async () => {
  workspace = await mkdtemp(path.join(os.tmpdir(), 'tether-follow-'));
});

afterEach(async () => {
  await rm(workspace, { recursive: true, force: true });
});

/**
 * A turn of `deltas` deltas, each in its own tick, so events are published while a follower catches
 * up. Each is a block of its own: deltas of one block waiting for the same commit would be joined.
 */
function streaming(deltas: number) {
  return createMockProvider({
    async turn({ runId, emit }) {
      for (let index = 0; index < deltas; index += 1) {
        emit({ type: 'run.message_delta', runId, blockId: `b:${index}`, text: `${index} ` });
        await new Promise((resolve) => setImmediate(resolve));
      }
      emit({ type: 'run.completed', runId, outcome: 'succeeded' });
    },
  });
}

type ReadEvents = ReturnType<typeof createInMemoryStore>['readEvents'];

/** An in-memory store whose readEvents goes through `read`, which is given the real one. */
function storeReading(read: (real: ReadEvents, ...args: Parameters<ReadEvents>) => ReturnType<ReadEvents>) {
  const inner = createInMemoryStore();
  const real: ReadEvents = (...args) => inner.readEvents(...args);
  return new Proxy(inner, {
    get(target, property, receiver) {
      if (property !== 'readEvents') return Reflect.get(target, property, receiver) as unknown;
      return (...args: Parameters<ReadEvents>) => read(real, ...args);
    },
  });
}

/** Opens a session and runs one turn to its end. */
async function sessionAfterOneTurn(runtime: Awaited<ReturnType<typeof createAgentRuntime>>): Promise<string> {
  const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: workspace } });
  const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'one' }] });
  await runtime.waitForRun(runId);
  return sessionId;
}

const seqs = (events: readonly ProtocolEvent[]) => events.map((event) => event.seq);
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, index) => from + index);

describe('runtime.follow', () => {
  it('hands on the stored events, then the live ones, in seq order with no gap or duplicate, also when it starts mid-turn', async () => {
    // A store whose reads take a few ticks: events are published while a follower reads it.
    const store = storeReading(async (real, ...args) => {
      for (let tick = 0; tick < 3; tick += 1) await new Promise((resolve) => setImmediate(resolve));
      return real(...args);
    });
    const runtime = await createAgentRuntime({ providers: [streaming(300)], store });
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: workspace } });
    const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'go' }] });
    const isEnd = (event: ProtocolEvent) => event.type === 'run.completed' && event.runId === runId;
    // One from the start, and one joining while the turn streams (its store read races the publishes):
    // it starts when the first has been handed the 10th event.
    let joinMidway!: (events: Promise<ProtocolEvent[]>) => void;
    const midway = new Promise<Promise<ProtocolEvent[]>>((resolve) => {
      joinMidway = resolve;
    });
    const fromStart = followUntil(runtime, sessionId, 0, (event) => {
      if (event.seq === 10) queueMicrotask(() => joinMidway(followUntil(runtime, sessionId, 2, isEnd)));
      return isEnd(event);
    });
    const [first, second] = await Promise.all([fromStart, midway.then((events) => events)]);
    const lastSeq = (await runtime.getSession(sessionId)).lastSeq;
    expect(seqs(first)).toEqual(range(1, lastSeq));
    expect(seqs(second)).toEqual(range(3, lastSeq));
    expect(first.slice(2)).toEqual(second);
    await runtime.shutdown();
  });

  it('stops when onEvent returns false or the stop function is called: nothing more is handed on', async () => {
    const runtime = await createAgentRuntime({ providers: [streaming(20)] });
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: workspace } });
    const handed: number[] = [];
    const stop = runtime.follow(sessionId, { afterSeq: 0, onEvent: (event) => void handed.push(event.seq) });
    const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'go' }] });
    await runtime.waitForRun(runId);
    stop();
    const seen = handed.length;
    expect(handed).toEqual(range(1, seen));
    const next = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'again' }] });
    await runtime.waitForRun(next.runId);
    expect(handed).toHaveLength(seen);
    await runtime.shutdown();
  });

  it('reports an unknown session to onError with session_not_found', async () => {
    const runtime = await createAgentRuntime({ providers: [streaming(1)] });
    const error = await new Promise((resolve) =>
      runtime.follow('ses_00000000000000000000000000000000', { afterSeq: 0, onEvent: () => true, onError: resolve }),
    );
    expect(error).toMatchObject({ code: 'session_not_found' });
    await runtime.shutdown();
  });

  it('subscribe gives the same events as an async iterable: replayed page by page, then live', async () => {
    const runtime = await createAgentRuntime({ providers: [streaming(700)] });
    const sessionId = await sessionAfterOneTurn(runtime);
    // More than a replay page is stored; the second turn streams while the subscriber reads them.
    const second = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'two' }] });
    const received: ProtocolEvent[] = [];
    for await (const event of runtime.subscribe(sessionId, { afterSeq: 0 })) {
      received.push(event);
      if (event.type === 'run.completed' && event.runId === second.runId) break;
    }
    expect(seqs(received)).toEqual(range(1, (await runtime.getSession(sessionId)).lastSeq));
    await runtime.shutdown();
  });
});

describe('runtime.follow with onStoredEvent (a paced replay)', () => {
  it('hands the stored events one at a time, reading the store a page at a time as they are taken, then the live ones to onEvent, gap-free', async () => {
    const stored: ProtocolEvent[] = [];
    // For each read of the store, how many stored events the follower had taken by then.
    const reads: Array<{ afterSeq: number; taken: number }> = [];
    const store = storeReading((real, sessionId, options) => {
      reads.push({ afterSeq: options.afterSeq, taken: stored.length });
      return real(sessionId, options);
    });
    const runtime = await createAgentRuntime({ providers: [streaming(700)], store });
    const sessionId = await sessionAfterOneTurn(runtime);
    const storedBefore = (await runtime.getSession(sessionId)).lastSeq;
    // The second turn streams while the follower takes the history slowly; a third starts once the
    // second has been handed on, so some events surely arrive live.
    const second = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'two' }] });
    reads.length = 0;
    let outstanding = 0;
    let mostOutstanding = 0;
    const live: ProtocolEvent[] = [];
    const thirdRunId = await new Promise<string>((resolve, reject) => {
      let third: Promise<string> | undefined;
      const startThirdAfter = (event: ProtocolEvent) => {
        if (event.type === 'run.completed' && event.runId === second.runId)
          third = runtime
            .submitTurn({ sessionId, input: [{ type: 'text', text: 'three' }] })
            .then((receipt) => receipt.runId);
      };
      runtime.follow(sessionId, {
        afterSeq: 0,
        onStoredEvent: async (event) => {
          expect(live).toEqual([]);
          outstanding += 1;
          mostOutstanding = Math.max(mostOutstanding, outstanding);
          await new Promise((next) => setImmediate(next));
          outstanding -= 1;
          stored.push(event);
          startThirdAfter(event);
        },
        onEvent: (event) => {
          live.push(event);
          startThirdAfter(event);
          if (event.type !== 'run.completed' || event.runId === second.runId) return true;
          third!.then(resolve, reject);
          return false;
        },
        onError: reject,
      });
    });
    const lastSeq = (await runtime.getSession(sessionId)).lastSeq;
    expect(live.at(-1)).toMatchObject({ type: 'run.completed', runId: thirdRunId });
    expect(seqs([...stored, ...live])).toEqual(range(1, lastSeq));
    expect(stored.length).toBeGreaterThanOrEqual(storedBefore);
    expect(mostOutstanding).toBe(1);
    // The next page is read only once the follower took the whole page before it: a small first
    // page, then as many small events as the page's budget holds (500 at most).
    expect(reads.slice(0, 3)).toEqual([
      { afterSeq: 0, taken: 0 },
      { afterSeq: 50, taken: 50 },
      { afterSeq: 550, taken: 550 },
    ]);
    await runtime.shutdown();
  });

  it('reads a history of large events a few at a time: a page holds about 1 MiB of text, not 500 events', async () => {
    const chunk = 'x'.repeat(100_000);
    const provider = createMockProvider({
      async turn({ runId, emit }) {
        for (let index = 0; index < 40; index += 1)
          emit({ type: 'run.message_delta', runId, blockId: 'b', text: chunk });
        emit({ type: 'run.completed', runId, outcome: 'succeeded' });
      },
    });
    const pages: number[] = [];
    const store = storeReading(async (real, sessionId, options) => {
      const page = await real(sessionId, options);
      pages.push(page.length);
      return page;
    });
    const runtime = await createAgentRuntime({ providers: [provider], store });
    const sessionId = await sessionAfterOneTurn(runtime);
    pages.length = 0;
    const { lastSeq } = await runtime.getSession(sessionId);
    await new Promise<void>((resolve, reject) => {
      const reached = (event: ProtocolEvent) => {
        if (event.seq === lastSeq) resolve();
      };
      runtime.follow(sessionId, {
        afterSeq: 0,
        onStoredEvent: async (event) => reached(event),
        onEvent: reached,
        onError: reject,
      });
    });
    // After the first page, none holds more than ~1 MiB of those 100,000-character events.
    expect(Math.max(...pages.slice(1))).toBeLessThanOrEqual(11);
    await runtime.shutdown();
  });

  it('stops when onStoredEvent resolves false: no further stored or live event is handed on', async () => {
    const runtime = await createAgentRuntime({ providers: [streaming(20)] });
    const sessionId = await sessionAfterOneTurn(runtime);
    const stored: number[] = [];
    const live: number[] = [];
    await new Promise<void>((resolve) => {
      runtime.follow(sessionId, {
        afterSeq: 0,
        onStoredEvent: async (event) => {
          stored.push(event.seq);
          if (event.seq < 3) return true;
          resolve();
          return false;
        },
        onEvent: (event) => void live.push(event.seq),
      });
    });
    const next = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'two' }] });
    await runtime.waitForRun(next.runId);
    expect(stored).toEqual([1, 2, 3]);
    expect(live).toEqual([]);
    await runtime.shutdown();
  });

  it('reports a store that fails during the replay to onError, after which nothing is handed on', async () => {
    let failReads = false;
    const store = storeReading((real, ...args) => (failReads ? Promise.reject(new Error('disk gone')) : real(...args)));
    const runtime = await createAgentRuntime({ providers: [streaming(1)], store });
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: workspace } });
    failReads = true;
    const handed: number[] = [];
    const error = await new Promise((resolve) => {
      runtime.follow(sessionId, {
        afterSeq: 0,
        onStoredEvent: async (event) => void handed.push(event.seq),
        onEvent: (event) => void handed.push(event.seq),
        onError: resolve,
      });
    });
    expect(error).toMatchObject({ message: 'disk gone' });
    expect(handed).toEqual([]);
    failReads = false;
    await runtime.shutdown();
  });
});

describe('runtime.subscribe ends with what it follows', () => {
  it('at shutdown: the iteration ends normally, after the events the shutdown wrote', async () => {
    const runtime = await createAgentRuntime({ providers: [streaming(1)], store: createInMemoryStore() });
    const sessionId = await sessionAfterOneTurn(runtime);
    const { lastSeq } = await runtime.getSession(sessionId);
    const seen: ProtocolEvent[] = [];
    const iterated = (async () => {
      for await (const event of runtime.subscribe(sessionId)) seen.push(event);
      return 'ended';
    })();
    await runtime.shutdown();
    expect(await iterated).toBe('ended');
    // Gap-free from the first event, through the turn's and on to what the shutdown wrote (its agent's stop).
    expect(seqs(seen)).toEqual(range(1, seen.length));
    expect(seen.length).toBeGreaterThanOrEqual(lastSeq);
  });

  it('when the session is deleted: the iteration throws session_not_found once its consumer has what was stored', async () => {
    const runtime = await createAgentRuntime({ providers: [streaming(1)], store: createInMemoryStore() });
    const sessionId = await sessionAfterOneTurn(runtime);
    await runtime.closeSession({ sessionId });
    const { lastSeq } = await runtime.getSession(sessionId);
    const seen: ProtocolEvent[] = [];
    let caughtUp: () => void = () => undefined;
    const allSeen = new Promise<void>((resolve) => {
      caughtUp = resolve;
    });
    const iterated = (async () => {
      for await (const event of runtime.subscribe(sessionId)) {
        seen.push(event);
        if (event.seq === lastSeq) caughtUp();
      }
    })();
    await allSeen;
    await runtime.deleteSession(sessionId);
    await expect(iterated).rejects.toMatchObject({ code: 'session_not_found' });
    expect(seqs(seen)).toEqual(range(1, lastSeq));
    await runtime.shutdown();
  });
});

describe('what a follow is told when its session goes or the runtime shuts down', () => {
  /** Follows the session from its start; `error` settles with what onError is told. */
  function following(runtime: Awaited<ReturnType<typeof createAgentRuntime>>, sessionId: string) {
    const told: unknown[] = [];
    const error = new Promise<unknown>((resolve) => {
      runtime.follow(sessionId, {
        afterSeq: 0,
        onEvent: () => true,
        onError: (reason) => {
          told.push(reason);
          resolve(reason);
        },
      });
    });
    return { told, error };
  }

  it('on a shared store, deleted through another runtime: each follow and iteration here ends with session_not_found', async () => {
    const shared = new SharedStoreDouble();
    const here = await createAgentRuntime({ providers: [createMockProvider()], store: shared.storeFor('owner-here') });
    const there = await createAgentRuntime({
      providers: [createMockProvider()],
      store: shared.storeFor('owner-there'),
    });
    const { sessionId } = await there.openSession({ workspace: { kind: 'directory', path: workspace } });
    await there.closeSession({ sessionId });
    const follows = [following(here, sessionId), following(here, sessionId)];
    const iterated = (async () => {
      for await (const _event of here.subscribe(sessionId));
    })();
    await there.deleteSession(sessionId);
    for (const follow of follows) expect(await follow.error).toMatchObject({ code: 'session_not_found' });
    await expect(iterated).rejects.toMatchObject({ code: 'session_not_found' });
    await Promise.all([here.shutdown(), there.shutdown()]);
    // Told once each, the shutdown adding nothing.
    for (const follow of follows) expect(follow.told).toHaveLength(1);
  });

  it('is told nothing at shutdown, nor, on a store of its own, when its session is deleted (its host ends it)', async () => {
    const shared = new SharedStoreDouble();
    const sharing = await createAgentRuntime({ providers: [createMockProvider()], store: shared.storeFor('owner') });
    const alone = await createAgentRuntime({ providers: [createMockProvider()], store: createInMemoryStore() });
    const open = async (runtime: typeof alone) => {
      const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: workspace } });
      return sessionId;
    };
    const [kept, deleted] = [await open(alone), await open(alone)];
    const followsAlone = [following(alone, kept), following(alone, deleted)];
    const followShared = following(sharing, await open(sharing));
    await alone.closeSession({ sessionId: deleted });
    await alone.deleteSession(deleted);
    await Promise.all([alone.shutdown(), sharing.shutdown()]);
    for (const follow of [...followsAlone, followShared]) expect(follow.told).toEqual([]);
  });
});
