import type { EventBody } from '@tether/protocol';
import { sampleSessionRecord } from '@tether/testkit';
import { describe, expect, it } from 'vitest';
import type { RunRecord } from '../store/tether-store.js';
import {
  continueFrom,
  decideFork,
  decideRewind,
  runsContinuedBy,
  runsInConversation,
} from './conversation-branches.js';
import { evolveRun, evolveSession } from './session-machine.js';

const at = '2026-12-01T00:00:00.000Z';
const run = (letter: string) => `run_${letter.repeat(32)}`;
const started = (letter: string): EventBody => ({
  type: 'run.started',
  runId: run(letter),
  input: null,
  inputRedacted: true,
});
const rewound = (letter: string): EventBody => ({ type: 'session.rewound', toRunId: run(letter), files: null });
const copy = { providerSessionId: 'conversation-1', afterMessageId: 'message-2' };

describe('forks and rewinds in the state machine', () => {
  it('keeps a run checkpoint on its run record', () => {
    const running = evolveRun(undefined, 'ses', started('a'), at) as RunRecord;
    const checkpoint = { providerSessionId: 'conversation-1', inputMessageId: 'input-1', lastMessageId: null };
    expect(evolveRun(running, 'ses', { type: 'run.checkpointed', runId: run('a'), ...checkpoint }, at)).toEqual({
      ...running,
      checkpoint,
    });
    expect(
      evolveRun(undefined, 'ses', { type: 'run.checkpointed', runId: run('a'), ...checkpoint }, at),
    ).toBeUndefined();
  });

  it("clears a pending copy once the agent reports the copy's own conversation", () => {
    const forked = sampleSessionRecord({ copyConversation: copy });
    const started = evolveSession(
      forked,
      { type: 'session.provider_session_changed', providerSessionId: 'copy-1' },
      at,
    );
    expect(started).toMatchObject({ copyConversation: null, providerSessionId: 'copy-1' });
  });

  it('leaves the source of a fork as it was, and a rewind to the decision that comes with it', () => {
    const source = sampleSessionRecord({ providerSessionId: 'conversation-1' });
    // Recorded in its log (so it counts as activity), nothing else of it moves.
    expect(evolveSession(source, { type: 'session.forked', forkSessionId: 'ses_fork', atRunId: null }, at)).toEqual({
      ...source,
      lastActivityAt: at,
    });
    expect(continueFrom(source, copy)).toMatchObject({ copyConversation: copy, providerSessionId: 'conversation-1' });
    // Nothing to copy: nothing to resume either, the next agent starts anew.
    expect(continueFrom(source, null)).toMatchObject({ copyConversation: null, providerSessionId: null });
  });

  it('knows which turns a run continued: earlier ones, less those a rewind took out before it started', () => {
    const log = [
      started('a'),
      started('b'),
      started('c'),
      rewound('b'),
      started('d'),
      started('e'),
      rewound('a'),
      started('f'),
    ];
    expect(runsContinuedBy(log, run('a'))).toEqual([]);
    expect(runsContinuedBy(log, run('c'))).toEqual([run('a'), run('b')]);
    expect(runsContinuedBy(log, run('d'))).toEqual([run('a')]);
    expect(runsContinuedBy(log, run('e'))).toEqual([run('a'), run('d')]);
    expect(runsContinuedBy(log, run('f'))).toEqual([]);
  });

  it('knows which turns the conversation holds now: every run, less those a rewind took out', () => {
    const log = [started('a'), started('b'), started('c'), rewound('b'), started('d')];
    expect(runsInConversation(log)).toEqual([run('a'), run('d')]);
    expect(runsInConversation([...log, rewound('a')])).toEqual([]);
  });

  describe('a file rewind to a run a rewind took out, with no agent running', () => {
    // Runs a and b ran in conversation-1; the session was rewound to b, then c ran in copy-1 (a's copy).
    const completed = (letter: string, providerSessionId: string): RunRecord => ({
      ...(evolveRun(undefined, 'ses', started(letter), at) as RunRecord),
      status: 'completed',
      checkpoint: { providerSessionId, inputMessageId: `input-${letter}`, lastMessageId: `last-${letter}` },
    });
    const runs = [completed('a', 'conversation-1'), completed('b', 'conversation-1'), completed('c', 'copy-1')];
    const conversation = [run('a'), run('c')];
    const resumed = sampleSessionRecord({ providerSessionId: 'copy-1' });
    const rewind = (state: typeof resumed, toRunId: string) =>
      decideRewind(
        state,
        { type: 'rewind_session', commandId: 'cmd_1', sessionId: state.sessionId, toRunId, files: true },
        { runs, continued: [], origin: null, conversation, compacted: new Set(), controls: new Set() },
      );

    it('is refused no_checkpoint when the agent started to ask resumes a conversation without it', () => {
      const refused = rewind(resumed, run('b'));
      expect('refusal' in refused && refused.refusal).toMatchObject({
        code: 'checkpoint_unavailable',
        details: { reason: 'no_checkpoint' },
      });
      // Nor does a pending copy of another conversation hold it.
      const copied = sampleSessionRecord({
        copyConversation: { providerSessionId: 'copy-1', afterMessageId: 'last-c' },
      });
      expect(rewind(copied, run('b'))).toHaveProperty('refusal');
    });

    it('is asked of the agent when one runs, when a pending copy is of its conversation, or when the run is in it', () => {
      const running = sampleSessionRecord({
        providerSessionId: 'copy-1',
        liveProcess: { pid: 1, startTime: null, marker: 'm' },
      });
      expect(rewind(running, run('b'))).toMatchObject({ fileRewindMessageId: 'input-b' });
      const copied = sampleSessionRecord({
        copyConversation: { providerSessionId: 'conversation-1', afterMessageId: 'last-a' },
      });
      expect(rewind(copied, run('b'))).toMatchObject({ fileRewindMessageId: 'input-b' });
      expect(rewind(resumed, run('a'))).toMatchObject({ fileRewindMessageId: 'input-a' });
    });
  });

  describe('a fork of the whole conversation', () => {
    // Run a answered in conversation-1; b was stopped before the model answered (its input is in the
    // conversation, no answer is); c was stopped before the agent took its input (no point at all);
    // d is a control that succeeded without a point (/compact: nothing before it can be resumed at).
    const ended = (letter: string, outcome: RunRecord['outcome'], checkpoint: RunRecord['checkpoint']): RunRecord => ({
      ...(evolveRun(undefined, 'ses', started(letter), at) as RunRecord),
      status: 'completed',
      outcome,
      checkpoint,
    });
    const point = (letter: string, lastMessageId: string | null, providerSessionId = 'conversation-1') => ({
      providerSessionId,
      inputMessageId: `input-${letter}`,
      lastMessageId,
    });
    const answered = ended('a', 'succeeded', point('a', 'last-a'));
    const unanswered = ended('b', 'interrupted', point('b', null));
    const untaken = ended('c', 'interrupted', null);
    const compacted = ended('d', 'succeeded', null);
    const source = sampleSessionRecord({ providerSessionId: 'conversation-1' });
    const fork = (runs: RunRecord[]) => {
      const decided = decideFork(
        source,
        { type: 'fork_session', commandId: 'cmd_1', sessionId: source.sessionId },
        { runs, forkSessionId: 'ses_fork', compacted: new Set() },
      );
      return 'refusal' in decided ? decided.refusal : decided.copyConversation?.afterMessageId;
    };

    it('is cut where the source stands, never left open to what the source runs after it', () => {
      expect(fork([answered])).toBe('last-a');
      // The unanswered input is the conversation's last entry: the fork holds it, as the source's next turn does.
      expect(fork([answered, unanswered])).toBe('input-b');
      // A run the agent never took added nothing: the cut stays after the latest run that did.
      expect(fork([answered, untaken])).toBe('last-a');
      expect(fork([answered, unanswered, untaken, untaken])).toBe('input-b');
    });

    it('copies all of it when no point after the last control, or in this conversation, is known', () => {
      expect(fork([answered, compacted])).toBeNull();
      expect(fork([answered, compacted, untaken])).toBeNull();
      expect(fork([ended('e', 'succeeded', point('e', 'last-e', 'conversation-0')), untaken])).toBeNull();
      expect(fork([])).toBeNull();
    });
  });

  describe('a cut before a compaction', () => {
    // a and b ran in conversation-1, c compacted it (/compact, or the agent as it filled up), d ran after.
    const completed = (letter: string): RunRecord => ({
      ...(evolveRun(undefined, 'ses', started(letter), at) as RunRecord),
      status: 'completed',
      outcome: 'succeeded',
      checkpoint: {
        providerSessionId: 'conversation-1',
        inputMessageId: `input-${letter}`,
        lastMessageId: `last-${letter}`,
      },
    });
    const runs = ['a', 'b', 'c', 'd'].map(completed);
    const compacted = new Set([run('c')]);
    const state = sampleSessionRecord({ providerSessionId: 'conversation-1' });
    const rewind = (toLetter: string) =>
      decideRewind(
        state,
        { type: 'rewind_session', commandId: 'cmd_1', sessionId: state.sessionId, toRunId: run(toLetter) },
        {
          runs,
          continued: runs
            .slice(
              0,
              runs.findIndex((candidate) => candidate.runId === run(toLetter)),
            )
            .map((r) => r.runId),
          origin: null,
          conversation: runs.map((r) => r.runId),
          compacted,
          controls: new Set(),
        },
      );
    const fork = (atLetter: string) =>
      decideFork(
        state,
        { type: 'fork_session', commandId: 'cmd_1', sessionId: state.sessionId, atRunId: run(atLetter) },
        { runs, forkSessionId: 'ses_fork', compacted },
      );

    it('is refused compacted, naming the run that compacted: the agent cannot resume before it', () => {
      for (const refused of [rewind('b'), rewind('c'), fork('a'), fork('b')]) {
        expect('refusal' in refused && refused.refusal).toMatchObject({
          code: 'checkpoint_unavailable',
          details: { reason: 'compacted' },
        });
      }
      const beforeIt = rewind('b');
      expect('refusal' in beforeIt && beforeIt.refusal.message).toContain(`(in run ${run('c')})`);
    });

    it('is allowed at the compaction or after it', () => {
      expect(rewind('d')).toMatchObject({ copyConversation: { afterMessageId: 'last-c' } });
      expect(fork('c')).toMatchObject({ copyConversation: { afterMessageId: 'last-c' } });
      expect(fork('d')).toMatchObject({ copyConversation: { afterMessageId: 'last-d' } });
    });
  });
});
