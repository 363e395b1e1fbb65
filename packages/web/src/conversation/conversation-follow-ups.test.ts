import type { EventBody } from '@tether/protocol';
import { describe, expect, it } from 'vitest';
import { formatContextUsage, formatPlanLimits } from '../format/format-limits.js';
import { waitingFollowUps } from './conversation-state.js';
import { fold, openedBody } from './conversation-test-events.js';

const first = `run_${'1'.repeat(32)}`;
const second = `run_${'2'.repeat(32)}`;
const input = (digit: string) => `inp_${digit.repeat(32)}`;
const text = (value: string) => [{ type: 'text' as const, text: value }];

/** A run, then a follow-up queued behind it and one steered into it (redacted). */
const queuedBehindFirst: EventBody[] = [
  openedBody(),
  { type: 'run.started', runId: first, input: text('Work.'), inputRedacted: false },
  {
    type: 'input.queued',
    inputId: input('a'),
    delivery: 'after_turn',
    runId: second,
    input: text('Next.'),
    inputRedacted: false,
  },
  { type: 'input.queued', inputId: input('b'), delivery: 'steer', runId: first, input: null, inputRedacted: true },
];

describe('follow-ups, plan limits and context usage in the conversation', () => {
  it('a follow-up of images or files alone says what it carries, not a blank line', () => {
    const image = {
      type: 'image' as const,
      mediaType: 'image/png' as const,
      sha256: 'a'.repeat(64),
      byteLength: 100,
      width: 40,
      height: 30,
    };
    const state = fold([
      ...queuedBehindFirst.slice(0, 2),
      {
        type: 'input.queued',
        inputId: input('c'),
        delivery: 'after_turn',
        runId: second,
        input: [image],
        inputRedacted: false,
      },
      {
        type: 'input.queued',
        inputId: input('d'),
        delivery: 'after_turn',
        runId: `run_${'3'.repeat(32)}`,
        input: [...text('Look.'), image, image, { type: 'file' as const, path: 'src/a.ts' }],
        inputRedacted: false,
      },
    ]);
    expect(waitingFollowUps(state).map((followUp) => followUp.text)).toEqual([
      '(1 image)',
      'Look. (with 2 images, file src/a.ts)',
    ]);
  });

  it('a queued follow-up waits, then becomes the next run; a steered one ends folded into the running run', () => {
    const waiting = fold(queuedBehindFirst);
    expect(waitingFollowUps(waiting).map((followUp) => [followUp.inputId, followUp.delivery, followUp.text])).toEqual([
      [input('a'), 'after_turn', 'Next.'],
      [input('b'), 'steer', null],
    ]);
    const ended = fold([
      ...queuedBehindFirst.slice(0, 3),
      {
        type: 'input.queued',
        inputId: input('b'),
        delivery: 'steer',
        runId: first,
        input: text('Also this.'),
        inputRedacted: false,
      },
      { type: 'input.folded', runId: first, inputId: input('b') },
      { type: 'run.completed', runId: first, outcome: 'succeeded' },
      { type: 'input.started', runId: second, inputId: input('a') },
      { type: 'run.started', runId: second, input: text('Next.'), inputRedacted: false },
    ]);
    expect(waitingFollowUps(ended)).toEqual([]);
    expect(ended.runs.map((run) => [run.runId, run.fromQueue])).toEqual([
      [first, null],
      [second, input('a')],
    ]);
    expect(ended.runs[0]!.parts).toEqual([
      {
        kind: 'follow_up',
        inputId: input('b'),
        followUp: expect.objectContaining({ status: 'folded', text: 'Also this.' }),
      },
    ]);
  });

  it('a cancelled follow-up shows in the run it waited behind, with why', () => {
    const state = fold([
      ...queuedBehindFirst.slice(0, 3),
      { type: 'run.completed', runId: first, outcome: 'interrupted' },
      { type: 'input.cancelled', inputId: input('a'), runId: second, reason: 'interrupted' },
    ]);
    expect(waitingFollowUps(state)).toEqual([]);
    expect(state.runs).toHaveLength(1);
    expect(state.runs[0]!.parts).toEqual([
      {
        kind: 'follow_up',
        inputId: input('a'),
        followUp: expect.objectContaining({ status: 'cancelled', cancelReason: 'interrupted' }),
      },
    ]);
  });

  it('a follow-up held by the plan limit says until when, and waits as any once a run starts', () => {
    const until = '2026-12-05T14:05:00.000Z';
    const held = fold([
      ...queuedBehindFirst.slice(0, 3),
      { type: 'run.completed', runId: first, outcome: 'failed' },
      { type: 'input.held', inputId: input('a'), runId: second, until, reason: 'plan_limit' },
    ]);
    expect(waitingFollowUps(held).map((followUp) => [followUp.inputId, followUp.heldUntil])).toEqual([
      [input('a'), until],
    ]);
    const hostTurn = `run_${'3'.repeat(32)}`;
    const waitingAgain = fold([
      ...queuedBehindFirst.slice(0, 3),
      { type: 'run.completed', runId: first, outcome: 'failed' },
      { type: 'input.held', inputId: input('a'), runId: second, until, reason: 'plan_limit' },
      { type: 'run.started', runId: hostTurn, input: text('Now.'), inputRedacted: false },
    ]);
    expect(waitingFollowUps(waitingAgain).map((followUp) => [followUp.inputId, followUp.heldUntil])).toEqual([
      [input('a'), null],
    ]);
  });

  it('keeps the last plan limits and context measurement, and words them for the header', () => {
    const now = new Date(2026, 11, 1, 12, 0);
    const resetsAt = new Date(2026, 11, 1, 14, 0).toISOString();
    const state = fold([
      openedBody(),
      {
        type: 'session.limits_changed',
        limits: {
          available: true,
          unavailableReason: null,
          windows: [{ window: 'five_hour', status: 'allowed_warning', usedPercent: 42.2, resetsAt }],
          reportedAt: resetsAt,
        },
      },
      {
        type: 'session.context_measured',
        runId: first,
        contextUsage: { model: null, totalTokens: 37, maxTokens: 100, percentage: 37, categories: [] },
      },
    ]);
    expect(formatPlanLimits(state.limits, now)).toBe('Plan limits: 5-hour 42%, resets 14:00');
    expect(formatContextUsage(state.contextUsage)).toBe('Context 37% full after the last run');
    expect(
      formatPlanLimits({ available: false, unavailableReason: 'api_key_account', windows: [], reportedAt: resetsAt }),
    ).toBe('No plan limits: API key account');
    expect(formatPlanLimits(null)).toBeNull();
    // Past its reset, a window reached no longer reads as reached.
    const afterReset = new Date(Date.parse(resetsAt) + 60_000);
    expect(
      formatPlanLimits(
        {
          available: true,
          unavailableReason: null,
          windows: [{ window: 'five_hour', status: 'rejected', usedPercent: 100, resetsAt }],
          reportedAt: resetsAt,
        },
        afterReset,
      ),
    ).toBe('Plan limits: 5-hour reset');
  });
});
