// Test-only (it registers vitest suites): never export it from the package index.
import { AgentError, type ProtocolEvent } from '@tether/protocol';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CommitUnit, RunRecord, SessionRecord, StoredReceipt, TetherStore } from './tether-store.js';

export interface StoreUnderTest {
  readonly store: TetherStore;
  readonly cleanup: () => Promise<void>;
}

const sessionId = `ses_${'a'.repeat(32)}`;
const otherSessionId = `ses_${'b'.repeat(32)}`;
const runId = `run_${'c'.repeat(32)}`;
const at = '2025-01-02T03:04:05.000Z';

function sessionRecord(id: string, overrides: Partial<SessionRecord> = {}): SessionRecord {
  return {
    sessionId: id,
    provider: 'claude',
    workspace: { kind: 'directory', path: '/work/project' },
    configuration: { model: 'sonnet', environment: { API_TOKEN: 'kept-in-the-session-row' } },
    ephemeral: false,
    redactInput: true,
    state: 'idle',
    activeRunId: null,
    providerSessionId: null,
    usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheCreationTokens: 0, costUsd: null },
    lastSeq: 0,
    createdAt: at,
    updatedAt: at,
    ...overrides,
  };
}

function runRecord(id: string, overrides: Partial<RunRecord> = {}): RunRecord {
  return { runId: id, sessionId, status: 'running', outcome: null, error: null, usage: null, startedAt: at, completedAt: null, ...overrides };
}

function receipt(commandId: string, session = sessionId): StoredReceipt {
  return { commandId, fingerprint: `fingerprint-of-${commandId}`, receipt: { type: 'open_session', commandId, sessionId: session }, at };
}

/** Events `from`..`to` of a session: a diagnostic (no runId) first, then message deltas of a run. */
function events(session: string, from: number, to: number): ProtocolEvent[] {
  const made: ProtocolEvent[] = [];
  for (let seq = from; seq <= to; seq += 1) {
    made.push(
      seq === 1
        ? { type: 'diagnostic', sessionId: session, seq, at, level: 'info', code: 'store.contract' }
        : { type: 'run.message_delta', sessionId: session, seq, at, runId, blockId: 'block-1', text: `part ${seq}` },
    );
  }
  return made;
}

function unit(parts: Partial<CommitUnit>): CommitUnit {
  return { events: [], sessions: [], runs: [], receipts: [], ...parts };
}

async function expectStoreFailure(promise: Promise<unknown>, reason?: string): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(AgentError.isInstance(error), 'rejects with an AgentError').toBe(true);
  expect((error as AgentError).code).toBe('store_failure');
  if (reason) expect((error as AgentError).details?.reason).toBe(reason);
}

/** The semantics every TetherStore must have; run against each implementation. */
export function describeStoreContract(name: string, makeStore: () => Promise<StoreUnderTest>): void {
  describe(`${name}: TetherStore contract`, () => {
    let subject: StoreUnderTest;
    let store: TetherStore;
    beforeEach(async () => {
      subject = await makeStore();
      store = subject.store;
    });
    afterEach(async () => {
      await subject.cleanup();
    });

    it('reads back what a commit wrote', async () => {
      const session = sessionRecord(sessionId, { lastSeq: 3 });
      const run = runRecord(runId);
      await store.commit(unit({ events: events(sessionId, 1, 3), sessions: [session], runs: [run], receipts: [receipt('cmd-1')] }));

      expect(await store.loadSessions()).toEqual([session]);
      expect(await store.getSession(sessionId)).toEqual(session);
      expect(await store.getRun(runId)).toEqual(run);
      expect(await store.listRuns(sessionId)).toEqual([run]);
      expect(await store.findReceipt('cmd-1')).toEqual(receipt('cmd-1'));
      expect(await store.readEvents(sessionId, { afterSeq: 0, limit: 100 })).toEqual(events(sessionId, 1, 3));
    });

    it('answers empty for what it does not hold', async () => {
      expect(await store.loadSessions()).toEqual([]);
      expect(await store.getSession(sessionId)).toBeUndefined();
      expect(await store.getRun(runId)).toBeUndefined();
      expect(await store.listRuns(sessionId)).toEqual([]);
      expect(await store.findReceipt('cmd-unknown')).toBeUndefined();
      expect(await store.readEvents(sessionId, { afterSeq: 0, limit: 100 })).toEqual([]);
    });

    it('replaces sessions and runs committed again, and keeps runs in start order', async () => {
      const laterRunId = `run_${'d'.repeat(32)}`;
      await store.commit(unit({ sessions: [sessionRecord(sessionId)], runs: [runRecord(runId)] }));
      const finished = runRecord(runId, {
        status: 'completed',
        outcome: 'failed',
        error: { code: 'provider_crashed', message: 'The agent process exited.', retryable: true, details: { exitCode: 1 } },
        usage: { inputTokens: 10, outputTokens: 20, cacheReadTokens: 1, cacheCreationTokens: 2, costUsd: 0.25 },
        completedAt: '2025-01-02T03:05:00.000Z',
      });
      const later = runRecord(laterRunId, { startedAt: '2025-01-02T03:06:00.000Z' });
      const running = sessionRecord(sessionId, { state: 'running', activeRunId: laterRunId, providerSessionId: 'provider-1', updatedAt: '2025-01-02T03:06:00.000Z' });
      await store.commit(unit({ sessions: [running], runs: [later, finished] }));

      expect(await store.loadSessions()).toEqual([running]);
      expect(await store.getRun(runId)).toEqual(finished);
      expect(await store.listRuns(sessionId)).toEqual([finished, later]);
      expect(await store.listRuns(otherSessionId)).toEqual([]);
    });

    it('reads events in pages after a seq, one session at a time', async () => {
      await store.commit(unit({ events: [...events(sessionId, 1, 25), ...events(otherSessionId, 1, 5)] }));
      const pages: number[][] = [];
      for (let afterSeq = 0; ; ) {
        const page = await store.readEvents(sessionId, { afterSeq, limit: 10 });
        if (page.length === 0) break;
        pages.push(page.map((event) => event.seq));
        afterSeq = page.at(-1)!.seq;
      }
      expect(pages).toEqual([
        [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
        [11, 12, 13, 14, 15, 16, 17, 18, 19, 20],
        [21, 22, 23, 24, 25],
      ]);
      expect(await store.readEvents(otherSessionId, { afterSeq: 2, limit: 2 })).toEqual(events(otherSessionId, 3, 4));
      expect(await store.readEvents(sessionId, { afterSeq: 0, limit: 0 })).toEqual([]);
    });

    describe('refuses a unit that does not continue the stored sequence, writing none of it', () => {
      const refused: [string, ProtocolEvent[]][] = [
        ['skips a seq', events(sessionId, 5, 6)],
        ['repeats a seq', events(sessionId, 3, 4)],
        ['leaves a gap inside the unit', [...events(sessionId, 4, 4), ...events(sessionId, 6, 6)]],
        ['starts a new session after 1', events(otherSessionId, 2, 2)],
        ['is fine for one session but not for another', [...events(sessionId, 4, 5), ...events(otherSessionId, 2, 3)]],
      ];
      for (const [description, badEvents] of refused) {
        it(description, async () => {
          await store.commit(unit({ events: events(sessionId, 1, 3), sessions: [sessionRecord(sessionId, { lastSeq: 3 })] }));
          const rejected = unit({
            events: badEvents,
            sessions: [sessionRecord(sessionId, { state: 'closed', lastSeq: 6 }), sessionRecord(otherSessionId)],
            runs: [runRecord(runId)],
            receipts: [receipt('cmd-refused')],
          });
          await expectStoreFailure(store.commit(rejected), 'sequence_conflict');

          expect(await store.loadSessions()).toEqual([sessionRecord(sessionId, { lastSeq: 3 })]);
          expect(await store.getRun(runId)).toBeUndefined();
          expect(await store.findReceipt('cmd-refused')).toBeUndefined();
          expect(await store.readEvents(sessionId, { afterSeq: 0, limit: 100 })).toEqual(events(sessionId, 1, 3));
          expect(await store.readEvents(otherSessionId, { afterSeq: 0, limit: 100 })).toEqual([]);
        });
      }
    });

    it('applies commits made concurrently in the order they were made', async () => {
      const commits = [];
      for (let batch = 0; batch < 10; batch += 1) {
        commits.push(store.commit(unit({ events: events(sessionId, batch * 5 + 1, batch * 5 + 5), sessions: [sessionRecord(sessionId, { lastSeq: batch * 5 + 5 })] })));
      }
      await Promise.all(commits);
      expect(await store.readEvents(sessionId, { afterSeq: 0, limit: 100 })).toEqual(events(sessionId, 1, 50));
      expect((await store.getSession(sessionId))?.lastSeq).toBe(50);
    });

    it('refuses every call after close, and closes twice without complaint', async () => {
      await store.commit(unit({ events: events(sessionId, 1, 1), sessions: [sessionRecord(sessionId, { lastSeq: 1 })] }));
      await store.close();
      await store.close();
      await expectStoreFailure(store.loadSessions());
      await expectStoreFailure(store.getSession(sessionId));
      await expectStoreFailure(store.getRun(runId));
      await expectStoreFailure(store.listRuns(sessionId));
      await expectStoreFailure(store.findReceipt('cmd-1'));
      await expectStoreFailure(store.readEvents(sessionId, { afterSeq: 0, limit: 10 }));
      await expectStoreFailure(store.commit(unit({ events: events(sessionId, 2, 2) })));
    });
  });
}
