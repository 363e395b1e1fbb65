// Test-only (it registers vitest suites): reached through @tether/testkit/store-contract, never the main entry.
import { AgentError, type ProtocolEvent } from '@tether/protocol';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type {
  CommitUnit,
  InteractionRecord,
  RunRecord,
  SessionRecord,
  StoredReceipt,
  TetherStore,
} from '@tether/runtime';
import { sampleWorktreeStatus } from '../sample-records.js';

export interface StoreUnderTest {
  readonly store: TetherStore;
  readonly cleanup: () => Promise<void>;
}

const sessionId = `ses_${'a'.repeat(32)}`;
const otherSessionId = `ses_${'b'.repeat(32)}`;
const runId = `run_${'c'.repeat(32)}`;
const at = '2025-01-02T03:04:05.000Z';

export function sessionRecord(id: string, overrides: Partial<SessionRecord> = {}): SessionRecord {
  return {
    sessionId: id,
    provider: 'claude',
    workspace: { kind: 'directory', path: '/work/project' },
    workspaceStatus: null,
    configuration: { model: 'sonnet', environment: { API_TOKEN: 'kept-in-the-session-row' } },
    ephemeral: false,
    redactInput: true,
    state: 'idle',
    activeRunId: null,
    model: null,
    liveProcess: null,
    permissionMode: null,
    providerSessionId: null,
    forkedFrom: null,
    copyConversation: null,
    usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheCreationTokens: 0, costUsd: null },
    title: null,
    lastRun: null,
    lastSeq: 0,
    createdAt: at,
    updatedAt: at,
    lastActivityAt: at,
    ...overrides,
  };
}

export function runRecord(id: string, overrides: Partial<RunRecord> = {}): RunRecord {
  return {
    runId: id,
    sessionId,
    status: 'running',
    outcome: null,
    error: null,
    usage: null,
    startedAt: at,
    completedAt: null,
    checkpoint: null,
    ...overrides,
  };
}

function interactionRef(hexDigit: string): string {
  return `int_${hexDigit.repeat(32)}`;
}

/** A pending approval by default; pass `kind: 'question_set'` for a question set. */
function interactionRecord(
  ref: string,
  overrides: Partial<InteractionRecord> & { kind?: 'approval' | 'question_set' } = {},
): InteractionRecord {
  const { kind = 'approval', ...rest } = overrides;
  const request: InteractionRecord['request'] =
    kind === 'approval'
      ? {
          kind: 'approval',
          toolName: 'Bash',
          toolUseId: `toolu-${ref}`,
          category: 'command',
          title: 'Run a command',
          input: { command: 'ls -la', nested: { flags: ['-l', '-a'] } },
          offerSessionApproval: true,
          defaultToNo: false,
        }
      : {
          kind: 'question_set',
          toolUseId: `toolu-${ref}`,
          questions: [
            {
              header: 'Database',
              question: 'Which database should the service use?',
              options: [
                { label: 'SQLite', description: 'Embedded, one file.' },
                { label: 'Postgres', description: '' },
              ],
              multiSelect: false,
            },
          ],
          sensitive: true,
        };
  return {
    interactionRef: ref,
    sessionId,
    runId,
    status: 'pending',
    request,
    requestedAt: at,
    settledAt: null,
    ...rest,
  };
}

function receipt(commandId: string, session = sessionId): StoredReceipt {
  return {
    commandId,
    fingerprint: `fingerprint-of-${commandId}`,
    receipt: { type: 'open_session', commandId, sessionId: session },
    at,
  };
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

export function unit(parts: Partial<CommitUnit>): CommitUnit {
  return { events: [], sessions: [], runs: [], interactions: [], receipts: [], blobs: [], ...parts };
}

export async function expectStoreFailure(promise: Promise<unknown>, reason?: string): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(AgentError.isInstance(error), 'rejects with an AgentError').toBe(true);
  expect((error as AgentError).code).toBe('store_failure');
  if (reason) expect((error as AgentError).details?.reason).toBe(reason);
}

/** A fresh store for each test of the enclosing describe, cleaned up after it; call the result inside a test. */
export function storePerTest(makeStore: () => Promise<StoreUnderTest>): () => TetherStore {
  let subject: StoreUnderTest | undefined;
  beforeEach(async () => {
    subject = await makeStore();
  });
  afterEach(async () => {
    await subject?.cleanup();
    subject = undefined;
  });
  return () => subject!.store;
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
      await store.commit(
        unit({ events: events(sessionId, 1, 3), sessions: [session], runs: [run], receipts: [receipt('cmd-1')] }),
      );

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
      expect(await store.listInteractions(sessionId)).toEqual([]);
      expect(await store.listInteractions(sessionId, { openOnly: true })).toEqual([]);
      expect(await store.getInteraction(sessionId, interactionRef('1'))).toBeUndefined();
      expect(await store.readEvents(sessionId, { afterSeq: 0, limit: 100 })).toEqual([]);
    });

    it('deletes a session with its runs, events and interactions, and nothing of another session', async () => {
      const run = runRecord(runId);
      await store.commit(
        unit({
          events: [...events(sessionId, 1, 3), ...events(otherSessionId, 1, 2)],
          sessions: [sessionRecord(sessionId), sessionRecord(otherSessionId)],
          runs: [run],
        }),
      );
      await store.deleteSession(sessionId);
      expect(await store.getSession(sessionId)).toBeUndefined();
      expect(await store.readEvents(sessionId, { afterSeq: 0, limit: 10 })).toEqual([]);
      expect(await store.getRun(runId)).toBeUndefined();
      expect(await store.listInteractions(sessionId)).toEqual([]);
      expect(await store.readEvents(otherSessionId, { afterSeq: 0, limit: 10 })).toHaveLength(2);
      expect(await store.getSession(otherSessionId)).toBeDefined();
    });

    it('round-trips the reported model and the live process, and clears them', async () => {
      const live = sessionRecord(sessionId, {
        model: 'claude-sonnet-5-5',
        liveProcess: { pid: 4242, startTime: 987654, marker: 'f'.repeat(32) },
      });
      await store.commit(unit({ sessions: [live] }));
      expect(await store.getSession(sessionId)).toEqual(live);
      const stopped = sessionRecord(sessionId, { model: 'claude-sonnet-5-5', liveProcess: null });
      await store.commit(unit({ sessions: [stopped] }));
      expect((await store.loadSessions())[0]).toEqual(stopped);
    });

    it('round-trips the queued inputs, plan limits and context usage, moves them on, and reads none where none were recorded', async () => {
      const queued = sessionRecord(sessionId, {
        state: 'running',
        activeRunId: runId,
        queuedInputs: [
          {
            inputId: `inp_${'1'.repeat(32)}`,
            delivery: 'after_turn',
            runId: `run_${'e'.repeat(32)}`,
            queuedAt: at,
            preview: 'then run the “tests” 😀',
          },
          { inputId: `inp_${'2'.repeat(32)}`, delivery: 'steer', runId, queuedAt: at, preview: null },
        ],
        limits: {
          available: true,
          unavailableReason: null,
          windows: [
            { window: 'five_hour', status: 'allowed_warning', usedPercent: 81.5, resetsAt: '2025-01-02T08:00:00.000Z' },
            { window: 'seven_day', status: null, usedPercent: null, resetsAt: null },
          ],
          reportedAt: at,
        },
        contextUsage: {
          model: 'claude-sonnet-5-5',
          totalTokens: 51_000,
          maxTokens: 200_000,
          percentage: 25.5,
          categories: [{ name: 'Messages', tokens: 40_000 }],
        },
      });
      const never = sessionRecord(otherSessionId);
      await store.commit(unit({ sessions: [queued, never] }));
      expect(await store.getSession(sessionId)).toEqual(queued);
      expect(await store.loadSessions()).toEqual([queued, never]);
      expect(await store.loadOpenSessions()).toEqual([queued, never]);
      const neverRead = await store.getSession(otherSessionId);
      expect(neverRead?.queuedInputs ?? []).toEqual([]);
      expect(neverRead?.limits ?? null).toBeNull();

      const drained = { ...queued, state: 'idle' as const, activeRunId: null, queuedInputs: [] };
      await store.commit(unit({ sessions: [drained] }));
      expect(await store.getSession(sessionId)).toEqual(drained);
      expect((await store.listSessions({ limit: 10 })).find((session) => session.sessionId === sessionId)).toEqual(
        drained,
      );
    });

    it('round-trips the title, the last run and the last activity, and moves them on', async () => {
      const titled = sessionRecord(sessionId, {
        title: 'Fix the “build” — then 😀 ship it…',
        lastRun: { runId, outcome: 'failed', completedAt: '2025-01-02T03:05:00.000Z' },
        lastActivityAt: '2025-01-02T03:05:01.000Z',
      });
      const untitled = sessionRecord(otherSessionId);
      await store.commit(unit({ sessions: [titled, untitled] }));
      expect(await store.getSession(sessionId)).toEqual(titled);
      expect(await store.loadSessions()).toEqual([titled, untitled]);

      const later = {
        ...titled,
        lastRun: {
          runId: `run_${'d'.repeat(32)}`,
          outcome: 'interrupted' as const,
          completedAt: '2025-01-02T03:06:00.000Z',
        },
        lastActivityAt: '2025-01-02T03:06:00.000Z',
      };
      await store.commit(unit({ sessions: [later] }));
      expect(await store.getSession(sessionId)).toEqual(later);
      expect(await store.getSession(otherSessionId)).toEqual(untitled);
    });

    it('round-trips a worktree workspace and its status as it moves from ready to kept, and a status never known', async () => {
      const workspace = { kind: 'git_worktree' as const, repository: '/work/project', baseRef: 'main' };
      const ready = sessionRecord(sessionId, {
        workspace,
        workspaceStatus: sampleWorktreeStatus({ changedFiles: 0 }),
      });
      const untracked = sessionRecord(otherSessionId);
      await store.commit(unit({ sessions: [ready, untracked] }));
      expect(await store.getSession(sessionId)).toEqual(ready);
      expect(await store.loadSessions()).toEqual([ready, untracked]);

      const kept = {
        ...ready,
        state: 'closed' as const,
        workspaceStatus: sampleWorktreeStatus({ state: 'kept', keptBecause: 'uncommitted_changes', changedFiles: 3 }),
      };
      await store.commit(unit({ sessions: [kept] }));
      expect(await store.getSession(sessionId)).toEqual(kept);
      expect((await store.getSession(otherSessionId))?.workspaceStatus).toBeNull();
    });

    it('lists the sessions whose workspace status names a directory, in the order first committed', async () => {
      const shared = sampleWorktreeStatus({ state: 'kept', keptBecause: 'in_use' });
      const elsewhere = sampleWorktreeStatus({ directory: `${shared.directory}-other` });
      const fork = sessionRecord(otherSessionId, { workspaceStatus: shared });
      const source = sessionRecord(sessionId, { workspaceStatus: shared, state: 'closed' });
      const third = sessionRecord(`ses_${'d'.repeat(32)}`, { workspaceStatus: elsewhere });
      await store.commit(unit({ sessions: [fork, third] }));
      await store.commit(unit({ sessions: [source] }));
      expect(await store.listSessionsInDirectory(shared.directory)).toEqual([fork, source]);
      expect(await store.listSessionsInDirectory(elsewhere.directory)).toEqual([third]);
      expect(await store.listSessionsInDirectory('/data/worktrees')).toEqual([]);
    });

    it('round-trips a waiting session and its permission mode, and a mode set back to unknown', async () => {
      const waiting = sessionRecord(sessionId, { state: 'waiting', activeRunId: runId, permissionMode: 'plan' });
      const other = sessionRecord(otherSessionId, { permissionMode: 'bypass' });
      await store.commit(unit({ sessions: [waiting, other] }));
      expect(await store.getSession(sessionId)).toEqual(waiting);
      expect(await store.loadSessions()).toEqual([waiting, other]);

      const unknown = sessionRecord(sessionId, { state: 'running', activeRunId: runId, permissionMode: null });
      await store.commit(unit({ sessions: [unknown] }));
      expect(await store.getSession(sessionId)).toEqual(unknown);
      expect(await store.getSession(otherSessionId)).toEqual(other);
    });

    describe('interactions', () => {
      it('reads back the interactions a commit wrote, written with its events', async () => {
        const approval = interactionRecord(interactionRef('1'));
        const questions = interactionRecord(interactionRef('2'), {
          kind: 'question_set',
          requestedAt: '2025-01-02T03:04:06.000Z',
        });
        const session = sessionRecord(sessionId, { state: 'waiting', activeRunId: runId, lastSeq: 2 });
        await store.commit(
          unit({ events: events(sessionId, 1, 2), sessions: [session], interactions: [approval, questions] }),
        );

        expect(await store.listInteractions(sessionId)).toEqual([approval, questions]);
        expect(await store.getInteraction(sessionId, approval.interactionRef)).toEqual(approval);
        expect(await store.getInteraction(sessionId, questions.interactionRef)).toEqual(questions);
        expect(await store.getInteraction(sessionId, interactionRef('9'))).toBeUndefined();
      });

      it('replaces an interaction committed again, keeping its place in request order', async () => {
        const first = interactionRecord(interactionRef('1'));
        const second = interactionRecord(interactionRef('2'), { requestedAt: '2025-01-02T03:04:06.000Z' });
        await store.commit(unit({ interactions: [first, second] }));

        const resolving = interactionRecord(interactionRef('1'), { status: 'resolving' });
        await store.commit(unit({ interactions: [resolving] }));
        expect(await store.getInteraction(sessionId, first.interactionRef)).toEqual(resolving);

        const approved = interactionRecord(interactionRef('1'), {
          status: 'approved',
          settledAt: '2025-01-02T03:04:07.000Z',
        });
        await store.commit(unit({ interactions: [approved] }));
        expect(await store.getInteraction(sessionId, first.interactionRef)).toEqual(approved);
        expect(await store.listInteractions(sessionId)).toEqual([approved, second]);
      });

      it('lists by requestedAt, then in the order first committed, whatever the references', async () => {
        // References chosen to sort against the expected order, so neither store can pass by key order.
        const late = interactionRecord(interactionRef('1'), { requestedAt: '2025-01-02T03:09:00.000Z' });
        const tieFirst = interactionRecord(interactionRef('f'), { requestedAt: '2025-01-02T03:05:00.000Z' });
        const tieSecond = interactionRecord(interactionRef('a'), { requestedAt: '2025-01-02T03:05:00.000Z' });
        const early = interactionRecord(interactionRef('e'), { requestedAt: '2025-01-02T03:04:00.000Z' });
        await store.commit(unit({ interactions: [late, tieFirst] }));
        await store.commit(unit({ interactions: [tieSecond, early] }));
        expect(await store.listInteractions(sessionId)).toEqual([early, tieFirst, tieSecond, late]);

        // Re-committing the first of a tie does not move it behind the second.
        const tieFirstResolving = { ...tieFirst, status: 'resolving' as const };
        await store.commit(unit({ interactions: [tieFirstResolving] }));
        expect(await store.listInteractions(sessionId)).toEqual([early, tieFirstResolving, tieSecond, late]);
      });

      it('lists only pending and resolving interactions with openOnly, still in request order', async () => {
        const minute = (m: number) => `2025-01-02T03:0${m}:00.000Z`;
        const all = [
          interactionRecord(interactionRef('1'), { requestedAt: minute(1), status: 'approved', settledAt: minute(2) }),
          interactionRecord(interactionRef('2'), { requestedAt: minute(2), status: 'pending' }),
          interactionRecord(interactionRef('3'), { requestedAt: minute(3), status: 'cancelled', settledAt: minute(4) }),
          interactionRecord(interactionRef('4'), { requestedAt: minute(4), status: 'resolving', kind: 'question_set' }),
          interactionRecord(interactionRef('5'), {
            requestedAt: minute(5),
            status: 'send_failed',
            settledAt: minute(6),
          }),
          interactionRecord(interactionRef('6'), { requestedAt: minute(6), status: 'withdrawn', settledAt: minute(7) }),
          interactionRecord(interactionRef('7'), { requestedAt: minute(7), status: 'pending', kind: 'question_set' }),
        ];
        await store.commit(unit({ interactions: all }));
        expect(await store.listInteractions(sessionId)).toEqual(all);
        expect(await store.listInteractions(sessionId, { openOnly: false })).toEqual(all);
        expect(await store.listInteractions(sessionId, { openOnly: true })).toEqual([all[1], all[3], all[6]]);

        const settled = { ...all[1]!, status: 'denied' as const, settledAt: minute(8) };
        await store.commit(unit({ interactions: [settled] }));
        expect(await store.listInteractions(sessionId, { openOnly: true })).toEqual([all[3], all[6]]);
      });

      it('never answers for one session with an interaction of another', async () => {
        const ref = interactionRef('1');
        const ours = interactionRecord(ref);
        await store.commit(unit({ interactions: [ours] }));
        expect(await store.getInteraction(otherSessionId, ref)).toBeUndefined();
        expect(await store.listInteractions(otherSessionId)).toEqual([]);
        expect(await store.listInteractions(otherSessionId, { openOnly: true })).toEqual([]);

        // Keyed by session and reference: the same reference in another session is another interaction.
        const theirs = interactionRecord(ref, {
          sessionId: otherSessionId,
          status: 'declined',
          kind: 'question_set',
          settledAt: at,
        });
        await store.commit(unit({ interactions: [theirs] }));
        expect(await store.getInteraction(sessionId, ref)).toEqual(ours);
        expect(await store.getInteraction(otherSessionId, ref)).toEqual(theirs);
        expect(await store.listInteractions(sessionId)).toEqual([ours]);
        expect(await store.listInteractions(otherSessionId)).toEqual([theirs]);
        expect(await store.listInteractions(otherSessionId, { openOnly: true })).toEqual([]);
      });

      it('keeps its own copies: changing a committed or returned record changes nothing stored', async () => {
        const committed = interactionRecord(interactionRef('1'));
        const expected = structuredClone(committed);
        await store.commit(unit({ interactions: [committed] }));
        (committed.request as { toolName: string }).toolName = 'Changed';

        const returned = await store.getInteraction(sessionId, committed.interactionRef);
        (returned!.request as { toolName: string }).toolName = 'Changed too';
        const listed = await store.listInteractions(sessionId);
        (listed[0]!.request as { input: Record<string, unknown> }).input['command'] = 'rm -rf /';

        expect(await store.getInteraction(sessionId, committed.interactionRef)).toEqual(expected);
        expect(await store.listInteractions(sessionId)).toEqual([expected]);
      });
    });

    it('replaces sessions and runs committed again, and keeps runs in start order', async () => {
      const laterRunId = `run_${'d'.repeat(32)}`;
      await store.commit(unit({ sessions: [sessionRecord(sessionId)], runs: [runRecord(runId)] }));
      const finished = runRecord(runId, {
        status: 'completed',
        outcome: 'failed',
        error: {
          code: 'provider_crashed',
          message: 'The agent process exited.',
          retryable: true,
          details: { exitCode: 1 },
        },
        usage: { inputTokens: 10, outputTokens: 20, cacheReadTokens: 1, cacheCreationTokens: 2, costUsd: 0.25 },
        completedAt: '2025-01-02T03:05:00.000Z',
      });
      const later = runRecord(laterRunId, { startedAt: '2025-01-02T03:06:00.000Z' });
      const running = sessionRecord(sessionId, {
        state: 'running',
        activeRunId: laterRunId,
        providerSessionId: 'provider-1',
        updatedAt: '2025-01-02T03:06:00.000Z',
      });
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
          const stored = interactionRecord(interactionRef('1'));
          await store.commit(
            unit({
              events: events(sessionId, 1, 3),
              sessions: [sessionRecord(sessionId, { lastSeq: 3 })],
              interactions: [stored],
            }),
          );
          const rejected = unit({
            events: badEvents,
            sessions: [sessionRecord(sessionId, { state: 'closed', lastSeq: 6 }), sessionRecord(otherSessionId)],
            runs: [runRecord(runId)],
            interactions: [
              interactionRecord(interactionRef('1'), { status: 'approved', settledAt: at }),
              interactionRecord(interactionRef('2')),
              interactionRecord(interactionRef('3'), { sessionId: otherSessionId }),
            ],
            receipts: [receipt('cmd-refused')],
          });
          await expectStoreFailure(store.commit(rejected), 'sequence_conflict');

          expect(await store.loadSessions()).toEqual([sessionRecord(sessionId, { lastSeq: 3 })]);
          expect(await store.getRun(runId)).toBeUndefined();
          expect(await store.listInteractions(sessionId)).toEqual([stored]);
          expect(await store.getInteraction(sessionId, interactionRef('2'))).toBeUndefined();
          expect(await store.listInteractions(otherSessionId)).toEqual([]);
          expect(await store.findReceipt('cmd-refused')).toBeUndefined();
          expect(await store.readEvents(sessionId, { afterSeq: 0, limit: 100 })).toEqual(events(sessionId, 1, 3));
          expect(await store.readEvents(otherSessionId, { afterSeq: 0, limit: 100 })).toEqual([]);
        });
      }
    });

    it('writes a receipt once: a unit carrying a commandId already stored (or twice) is refused whole, the stored receipt kept', async () => {
      const first = unit({
        events: events(sessionId, 1, 1),
        sessions: [sessionRecord(sessionId, { lastSeq: 1 })],
        receipts: [receipt('cmd-1')],
      });
      await store.commit(first);
      const other = (receipts: StoredReceipt[]) =>
        unit({
          events: events(otherSessionId, 1, 2),
          sessions: [sessionRecord(otherSessionId, { lastSeq: 2 })],
          runs: [runRecord(runId, { sessionId: otherSessionId })],
          receipts,
        });
      // Another runtime carrying the same command out: another session named, another fingerprint.
      const again = { ...receipt('cmd-1', otherSessionId), fingerprint: 'fingerprint-of-another-command' };
      await expectStoreFailure(store.commit(other([receipt('cmd-2', otherSessionId), again])), 'receipt_exists');
      await expectStoreFailure(
        store.commit(other([receipt('cmd-3', otherSessionId), receipt('cmd-3', otherSessionId)])),
        'receipt_exists',
      );

      expect(await store.findReceipt('cmd-1')).toEqual(receipt('cmd-1'));
      expect(await store.findReceipt('cmd-2')).toBeUndefined();
      expect(await store.findReceipt('cmd-3')).toBeUndefined();
      expect(await store.loadSessions()).toEqual([sessionRecord(sessionId, { lastSeq: 1 })]);
      expect(await store.getRun(runId)).toBeUndefined();
      expect(await store.readEvents(otherSessionId, { afterSeq: 0, limit: 100 })).toEqual([]);
      // Nothing of the refused units stayed: the same change under a receipt of its own is stored.
      await store.commit(other([receipt('cmd-2', otherSessionId)]));
      expect(await store.findReceipt('cmd-2')).toEqual(receipt('cmd-2', otherSessionId));
      expect(await store.readEvents(otherSessionId, { afterSeq: 0, limit: 100 })).toEqual(events(otherSessionId, 1, 2));
    });

    it('applies commits made concurrently in the order they were made', async () => {
      const commits = [];
      for (let batch = 0; batch < 10; batch += 1) {
        commits.push(
          store.commit(
            unit({
              events: events(sessionId, batch * 5 + 1, batch * 5 + 5),
              sessions: [sessionRecord(sessionId, { lastSeq: batch * 5 + 5 })],
            }),
          ),
        );
      }
      await Promise.all(commits);
      expect(await store.readEvents(sessionId, { afterSeq: 0, limit: 100 })).toEqual(events(sessionId, 1, 50));
      expect((await store.getSession(sessionId))?.lastSeq).toBe(50);
    });

    it('refuses every call after close, and closes twice without complaint', async () => {
      await store.commit(
        unit({ events: events(sessionId, 1, 1), sessions: [sessionRecord(sessionId, { lastSeq: 1 })] }),
      );
      await store.close();
      await store.close();
      await expectStoreFailure(store.loadSessions());
      await expectStoreFailure(store.getSession(sessionId));
      await expectStoreFailure(store.getRun(runId));
      await expectStoreFailure(store.listRuns(sessionId));
      await expectStoreFailure(store.findReceipt('cmd-1'));
      await expectStoreFailure(store.listInteractions(sessionId));
      await expectStoreFailure(store.getInteraction(sessionId, interactionRef('1')));
      await expectStoreFailure(store.readEvents(sessionId, { afterSeq: 0, limit: 10 }));
      await expectStoreFailure(store.commit(unit({ events: events(sessionId, 2, 2) })));
      await expectStoreFailure(store.readBlob(sessionId, 'a'.repeat(64)));
    });
  });
}
