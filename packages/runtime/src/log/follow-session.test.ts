import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { ProtocolEvent } from '@tether/protocol';
import { createMockProvider } from '@tether/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createAgentRuntime } from '../runtime/agent-runtime.js';
import { createInMemoryStore } from '../store/in-memory-store.js';

let workspace: string;

beforeEach(async () => {
  workspace = await mkdtemp(path.join(os.tmpdir(), 'tether-follow-paced-'));
});

afterEach(async () => {
  await rm(workspace, { recursive: true, force: true });
});

/** A turn of `deltas` deltas, each in its own tick, so events are published while a follower replays. */
function streaming(deltas: number) {
  return createMockProvider({
    async turn({ runId, emit }) {
      for (let index = 0; index < deltas; index += 1) {
        emit({ type: 'run.message_delta', runId, blockId: 'b:0', text: `${index} ` });
        await new Promise((resolve) => setImmediate(resolve));
      }
      emit({ type: 'run.completed', runId, outcome: 'succeeded' });
    },
  });
}

/** An in-memory store that notes, for each readEvents, how many stored events the follower had taken by then. */
function observedStore(taken: () => number) {
  const inner = createInMemoryStore();
  const reads: Array<{ afterSeq: number; taken: number }> = [];
  const store = new Proxy(inner, {
    get(target, property, receiver) {
      if (property !== 'readEvents') return Reflect.get(target, property, receiver) as unknown;
      return (...args: Parameters<typeof inner.readEvents>) => {
        reads.push({ afterSeq: args[1].afterSeq, taken: taken() });
        return inner.readEvents(...args);
      };
    },
  });
  return { store, reads };
}

const seqs = (events: readonly ProtocolEvent[]) => events.map((event) => event.seq);
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, index) => from + index);

describe('runtime.follow with onStoredEvent (a paced replay)', () => {
  it('hands the stored events one at a time, reading the store a page at a time as they are taken, then the live ones to onEvent, gap-free', async () => {
    const stored: ProtocolEvent[] = [];
    const { store, reads } = observedStore(() => stored.length);
    const runtime = await createAgentRuntime({ providers: [streaming(700)], store });
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: workspace } });
    const first = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'one' }] });
    await runtime.waitForRun(first.runId);
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
        if (event.type === 'run.completed' && event.runId === second.runId) third = runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'three' }] }).then((receipt) => receipt.runId);
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
    // The next page is read only once the follower took the whole page before it.
    expect(reads.slice(0, 2)).toEqual([
      { afterSeq: 0, taken: 0 },
      { afterSeq: 500, taken: 500 },
    ]);
    await runtime.shutdown();
  });

  it('stops when onStoredEvent resolves false: no further stored or live event is handed on', async () => {
    const runtime = await createAgentRuntime({ providers: [streaming(20)] });
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: workspace } });
    const first = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'one' }] });
    await runtime.waitForRun(first.runId);
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
    const inner = createInMemoryStore();
    let failReads = false;
    const store = new Proxy(inner, {
      get(target, property, receiver) {
        if (property !== 'readEvents') return Reflect.get(target, property, receiver) as unknown;
        return (...args: Parameters<typeof inner.readEvents>) => (failReads ? Promise.reject(new Error('disk gone')) : inner.readEvents(...args));
      },
    });
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
