import type { AgentError } from '@tether/protocol';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createInMemoryStore } from '../store/in-memory-store.js';
import type { TetherStore } from '../store/tether-store.js';
import { ForcedStoreBound } from './forced-store-bound.js';

const boundMs = 3_000;

function setUp() {
  const abandoned: string[] = [];
  const reported: AgentError[] = [];
  const store: TetherStore = { ...createInMemoryStore(), abandon: () => abandoned.push('abandoned') };
  const bound = new ForcedStoreBound(store, (error) => reported.push(error), boundMs);
  return { bound, abandoned, reported };
}

/** A store call that answers only when told. */
function held() {
  let answer = () => {};
  const promise = new Promise<void>((resolve) => {
    answer = resolve;
  });
  return { promise, answer };
}

describe("a forced stop's bound on its store waits", () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  it('never abandons a store the stop was not forced for, however long it waits', async () => {
    const { bound, abandoned } = setUp();
    const call = held();
    const waited = bound.wait(call.promise);
    await vi.advanceTimersByTimeAsync(10 * boundMs);
    call.answer();
    await waited;
    expect(abandoned).toEqual([]);
  });

  it('counts only the time spent waiting on the store: a long grace or agents ending between waits abandon nothing', async () => {
    const { bound, abandoned } = setUp();
    bound.force();
    // The grace, the agents' ends, git: not waits on the store.
    await vi.advanceTimersByTimeAsync(5 * boundMs);
    for (let index = 0; index < 3; index += 1) {
      const call = held();
      const waited = bound.wait(call.promise);
      await vi.advanceTimersByTimeAsync(boundMs - 1);
      call.answer();
      await waited;
    }
    expect(abandoned).toEqual([]);
  });

  it('abandons a store that leaves one wait unanswered for the bound, once, and says why', async () => {
    const { bound, abandoned, reported } = setUp();
    const call = held();
    const waited = bound.wait(call.promise);
    // Forced while the wait is under way: bounded from then on.
    await vi.advanceTimersByTimeAsync(boundMs);
    bound.force();
    await vi.advanceTimersByTimeAsync(boundMs - 1);
    expect(abandoned).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(abandoned).toEqual(['abandoned']);
    expect(reported).toMatchObject([{ code: 'store_failure', details: { reason: 'store_abandoned' } }]);
    call.answer();
    await waited;
    const next = held();
    const later = bound.wait(next.promise);
    await vi.advanceTimersByTimeAsync(2 * boundMs);
    next.answer();
    await later;
    expect(abandoned).toEqual(['abandoned']);
  });

  it('bounds nothing once the store has closed', async () => {
    const { bound, abandoned } = setUp();
    bound.force();
    bound.finish();
    const call = held();
    const waited = bound.wait(call.promise);
    await vi.advanceTimersByTimeAsync(2 * boundMs);
    call.answer();
    await waited;
    expect(abandoned).toEqual([]);
  });
});
