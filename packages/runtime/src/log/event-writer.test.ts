import { sampleSessionRecord } from '@tether/testkit';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { CommitUnit, SessionRecord, TetherStore } from '../store/tether-store.js';
import { EventWriter } from './event-writer.js';

// Only commit is reached by staged output; the rest of the store is not this layer's concern.
function recordingStore(): { store: TetherStore; commitTimes: number[] } {
  const commitTimes: number[] = [];
  const store = {
    commit: async (_unit: CommitUnit) => {
      commitTimes.push(performance.now());
    },
  } as unknown as TetherStore;
  return { store, commitTimes };
}

const runId = 'run_0123456789abcdef0123456789abcdef';

/** Stages one text delta of the session's block m:0, as the runtime stages streamed text. */
function deltaStager(writer: EventWriter, session: SessionRecord): (text: string) => void {
  return (text) =>
    writer.stageDelta(
      { sessionId: session.sessionId, body: { type: 'run.message_delta', runId, blockId: 'm:0', text }, at: '' },
      session,
    );
}

describe('EventWriter commit pacing', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setImmediate', 'clearImmediate', 'performance'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('commits a burst at once, then at most once per display frame (16 ms)', async () => {
    const { store, commitTimes } = recordingStore();
    const writer = new EventWriter({ store, onCommitted: () => {}, onDropped: () => {} });
    const session = sampleSessionRecord();
    // A delta every millisecond for 200 ms, then a quiet spell, then one more.
    const stageDelta = deltaStager(writer, session);
    await vi.advanceTimersByTimeAsync(1_000);
    const start = performance.now();
    for (let millisecond = 0; millisecond < 200; millisecond += 1) {
      stageDelta('x');
      await vi.advanceTimersByTimeAsync(1);
    }
    await vi.advanceTimersByTimeAsync(100);
    const gaps = commitTimes.slice(1).map((time, index) => time - commitTimes[index]!);
    expect(commitTimes[0]! - start).toBe(0);
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(16);
    // 200 ms of streaming: 13 commits instead of one a millisecond (or 40 at a 5 ms window).
    expect(commitTimes.length).toBeLessThanOrEqual(14);
    const before = commitTimes.length;
    const quietEnd = performance.now();
    stageDelta('y');
    await vi.advanceTimersByTimeAsync(0);
    expect(commitTimes).toHaveLength(before + 1);
    expect(commitTimes.at(-1)! - quietEnd).toBe(0);
  });

  it("commits a run's end with what was staged before it, before any timer or I/O turn of the event loop", async () => {
    const { store, commitTimes } = recordingStore();
    const committed: string[][] = [];
    const writer = new EventWriter({
      store,
      onCommitted: (events) => committed.push(events.map((event) => event.type)),
      onDropped: () => {},
    });
    const session = sampleSessionRecord();
    writer.stageDelta(
      { sessionId: session.sessionId, body: { type: 'run.message_delta', runId, blockId: 'm:0', text: 'x' }, at: '' },
      session,
    );
    writer.stage({
      events: [
        {
          sessionId: session.sessionId,
          body: { type: 'run.completed', runId, outcome: 'succeeded', stopReason: 'end_turn' },
          at: '',
        },
      ],
      sessions: [session],
      runs: [],
      interactions: [],
    });
    // Timers and setImmediate are fake and never advanced: only microtasks run here.
    for (let turn = 0; turn < 20 && committed.length === 0; turn += 1) await Promise.resolve();
    expect(committed).toEqual([['run.message_delta', 'run.completed']]);
    expect(commitTimes).toHaveLength(1);
  });

  it('commits a message’s last text when the message ends, not at the window, and nothing when nothing is staged', async () => {
    const { store, commitTimes } = recordingStore();
    const committed: string[] = [];
    const writer = new EventWriter({
      store,
      onCommitted: (events) =>
        committed.push(...events.map((event) => (event.type === 'run.message_delta' ? event.text : event.type))),
      onDropped: () => {},
    });
    const session = sampleSessionRecord();
    const stageDelta = deltaStager(writer, session);
    await vi.advanceTimersByTimeAsync(1_000);
    stageDelta('first');
    await vi.advanceTimersByTimeAsync(0);
    expect(committed).toEqual(['first']);
    // Within the window: held for its timer, which is fake and never advanced from here on.
    stageDelta('last');
    writer.flushSoon();
    for (let turn = 0; turn < 20 && committed.length === 1; turn += 1) await Promise.resolve();
    expect(committed).toEqual(['first', 'last']);
    writer.flushSoon();
    for (let turn = 0; turn < 20; turn += 1) await Promise.resolve();
    expect(commitTimes).toHaveLength(2);
  });
});

describe('EventWriter retries of background output', () => {
  /** A store whose every commit fails, counting them; the writer's drops, per attempt count. */
  async function dropsAfter(lastAttempts: boolean): Promise<{ commits: number; dropped: string[] }> {
    let commits = 0;
    const store = {
      commit: async () => {
        commits += 1;
        throw new Error('the disk is full');
      },
    } as unknown as TetherStore;
    const dropped: string[] = [];
    const writer = new EventWriter({
      store,
      onCommitted: () => {},
      onDropped: (sessionIds) => dropped.push(...sessionIds),
    });
    if (lastAttempts) writer.makeLastAttempts();
    const session = sampleSessionRecord();
    deltaStager(writer, session)('x');
    await writer.flush();
    return { commits, dropped };
  }

  it('tries a failed unit again a few times, and only once the runtime is stopping (then drops it)', async () => {
    const session = sampleSessionRecord();
    expect(await dropsAfter(false)).toEqual({ commits: 4, dropped: [session.sessionId] });
    expect(await dropsAfter(true)).toEqual({ commits: 1, dropped: [session.sessionId] });
  });
});
