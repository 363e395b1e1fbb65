import { describe, expect, it } from 'vitest';
import { boundedText, runSummary } from './notification-body.js';

describe('boundedText: model text as one short line a receiver can show', () => {
  it('writes bidirectional controls out, so a path reads in its own order', () => {
    expect(boundedText('List files in \u202etxt.exe', 200)).toBe('List files in <U+202E>txt.exe');
    expect(boundedText('Fix \u001b[31mthe\u001b[0m tests \u001b]0;owned\u0007now', 200)).toBe('Fix the tests now');
  });

  it('cuts on a whole character: an emoji at the limit is kept whole or left out, never halved', () => {
    const cut = boundedText(`${'a'.repeat(198)}😀bcd`, 200);
    expect(cut).toBe(`${'a'.repeat(198)}😀…`);
    expect(() => encodeURIComponent(cut)).not.toThrow();
    expect(boundedText(`${'a'.repeat(199)}😀bcd`, 200)).toBe(`${'a'.repeat(199)}…`);
  });

  it('drops control characters and collapses whitespace', () => {
    expect(boundedText('one\u0007 two\n\n three\u009b', 200)).toBe('one two three');
  });
});

describe('runSummary: how a run ended, as a notification says it', () => {
  it('a plan limit says so and when turns may go again; never the error message', () => {
    const summary = runSummary({
      type: 'run.completed',
      sessionId: `ses_${'a'.repeat(32)}`,
      seq: 9,
      at: '2026-12-01T10:00:00.000Z',
      runId: `run_${'b'.repeat(32)}`,
      outcome: 'failed',
      error: {
        code: 'provider_api_error',
        message: 'The account plan limit is reached.',
        retryable: true,
        details: { reason: 'plan_limit', resetsAt: '2026-12-01T14:05:00.000Z' },
      },
    });
    expect(summary).toEqual({
      outcome: 'failed',
      errorCode: 'provider_api_error',
      errorReason: 'plan_limit',
      resetsAt: '2026-12-01T14:05:00.000Z',
    });
  });
});
