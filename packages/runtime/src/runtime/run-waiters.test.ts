import type { RunSnapshot } from '@tether/protocol';
import { describe, expect, it } from 'vitest';
import { RunWaiters } from './run-waiters.js';

const running: RunSnapshot = {
  runId: 'run_1',
  sessionId: 'ses_1',
  status: 'running',
  outcome: null,
  error: null,
  usage: null,
  startedAt: '2026-12-06T00:00:00.000Z',
  completedAt: null,
  checkpoint: null,
};

describe('waiting for a run', () => {
  it('gives up when its signal aborts, even while the run is still being read (a store that does not answer)', async () => {
    const waiters = new RunWaiters(() => new Promise<RunSnapshot>(() => {}));
    const grace = new AbortController();
    const waiting = waiters.wait('run_1', grace.signal);
    grace.abort(new Error('The shutdown grace is over.'));
    await expect(waiting).rejects.toThrow('The shutdown grace is over.');
    expect(waiters.waitedSessions()).toEqual(new Set());
  });

  it('resolves with the run when it is read completed', async () => {
    const completed = { ...running, status: 'completed' as const, outcome: 'succeeded' as const };
    const waiters = new RunWaiters(async () => completed);
    expect(await waiters.wait('run_1', new AbortController().signal)).toEqual(completed);
  });
});
