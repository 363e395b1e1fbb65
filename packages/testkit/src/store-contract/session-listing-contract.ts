// Test-only (it registers vitest suites): reached through @tether/testkit/store-contract, never the main entry.
import { AgentError } from '@tether/protocol';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type StoreUnderTest, sessionRecord } from './store-contract.js';
import type { SessionRecord, TetherStore } from '@tether/runtime';

function record(digit: string, createdAt: string, overrides: Partial<SessionRecord> = {}): SessionRecord {
  return sessionRecord(`ses_${digit.repeat(32)}`, {
    createdAt,
    updatedAt: createdAt,
    lastActivityAt: createdAt,
    ...overrides,
  });
}

const second = (value: number) => `2026-01-01T00:00:0${value}.000Z`;

// Committed out of order, with two sessions in the same millisecond (the id breaks the tie).
const sessions = [
  record('1', second(1)),
  record('2', second(3), { state: 'closed' }),
  record('3', second(2), { state: 'closed' }),
  record('4', second(2), { state: 'running', activeRunId: `run_${'4'.repeat(32)}` }),
  record('5', second(4), { state: 'closed', liveProcess: { pid: 4242, startTime: 17, marker: 'marker-5' } }),
  record('6', second(5), { state: 'waiting' }),
];

const digits = (records: readonly SessionRecord[]) => records.map((record) => record.sessionId.slice(-1)).join('');

/** Listing, paging and counting sessions: what the runtime reads instead of holding every session. Run with describeStoreContract. */
export function describeSessionListingContract(name: string, makeStore: () => Promise<StoreUnderTest>): void {
  describe(`${name}: TetherStore session listing`, () => {
    let subject: StoreUnderTest;
    let store: TetherStore;
    beforeEach(async () => {
      subject = await makeStore();
      store = subject.store;
      await store.commit({ events: [], sessions, runs: [], interactions: [], receipts: [], blobs: [] });
    });
    afterEach(async () => {
      await subject.cleanup();
    });

    it('loads at start-up the open sessions and the closed ones that still record a process, by id', async () => {
      expect(await store.loadOpenSessions()).toEqual([sessions[0], sessions[3], sessions[4], sessions[5]]);
      await store.commit({
        events: [],
        sessions: [
          { ...sessions[4]!, liveProcess: null },
          { ...sessions[0]!, state: 'closed' },
        ],
        runs: [],
        interactions: [],
        receipts: [],
        blobs: [],
      });
      expect(digits(await store.loadOpenSessions())).toBe('46');
    });

    it('lists newest first, createdAt then id, and continues after a position exactly', async () => {
      expect(digits(await store.listSessions({ limit: 10 }))).toBe('652431');
      const first = await store.listSessions({ limit: 3 });
      expect(digits(first)).toBe('652');
      const next = await store.listSessions({ limit: 2, before: first.at(-1)! });
      expect(digits(next)).toBe('43');
      expect(digits(await store.listSessions({ limit: 10, before: next.at(-1)! }))).toBe('1');
      expect(await store.listSessions({ limit: 10, before: sessions[0]! })).toEqual([]);
      // A position need not be a stored session: the order alone decides.
      expect(
        digits(await store.listSessions({ limit: 10, before: { createdAt: second(2), sessionId: 'ses_zzz' } })),
      ).toBe('431');
      expect(await store.listSessions({ limit: 1 })).toEqual([sessions[5]]);
    });

    it('lists one state, paged the same way', async () => {
      expect(digits(await store.listSessions({ limit: 10, state: 'closed' }))).toBe('523');
      const first = await store.listSessions({ limit: 2, state: 'closed' });
      expect(digits(await store.listSessions({ limit: 2, state: 'closed', before: first.at(-1)! }))).toBe('3');
      expect(digits(await store.listSessions({ limit: 10, state: 'running' }))).toBe('4');
    });

    it('gives nothing for a limit of zero or less, and copies it keeps to itself', async () => {
      expect(await store.listSessions({ limit: 0 })).toEqual([]);
      expect(await store.listSessions({ limit: -1 })).toEqual([]);
      const [listed] = await store.listSessions({ limit: 1 });
      (listed as { title: string | null }).title = 'changed by the caller';
      expect((await store.getSession(sessions[5]!.sessionId))?.title).toBeNull();
    });

    it('counts sessions by state, every state present, and follows commits and deletes', async () => {
      expect(await store.countSessionsByState()).toEqual({ idle: 1, running: 1, waiting: 1, closed: 3 });
      await store.commit({
        events: [],
        sessions: [{ ...sessions[0]!, state: 'closed' }],
        runs: [],
        interactions: [],
        receipts: [],
        blobs: [],
      });
      await store.deleteSession(sessions[1]!.sessionId);
      expect(await store.countSessionsByState()).toEqual({ idle: 0, running: 1, waiting: 1, closed: 3 });
      expect(digits(await store.listSessions({ limit: 10 }))).toBe('65431');
    });

    it('refuses the listing calls after close', async () => {
      await store.close();
      for (const call of [store.loadOpenSessions(), store.listSessions({ limit: 1 }), store.countSessionsByState()]) {
        const error = await call.then(
          () => undefined,
          (thrown: unknown) => thrown,
        );
        expect(AgentError.isInstance(error) && error.code).toBe('store_failure');
      }
    });
  });
}
