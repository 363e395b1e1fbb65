import { describe, expect, it } from 'vitest';
import { limitsFromUsage, limitsWithWindow, sameLimits, windowFromRateLimitInfo } from './rate-limits.js';

const at = '2026-12-01T20:00:00.000Z';

describe('plan limits', () => {
  it("reads an API-key account's get_usage answer (what the CLI 2.1.332 gives) as unavailable, said so", () => {
    const answer = { session: {}, subscription_type: null, rate_limits_available: false, rate_limits: null };
    expect(limitsFromUsage(answer, at)).toEqual({
      available: false,
      unavailableReason: 'api_key_account',
      windows: [],
      reportedAt: at,
    });
    expect(limitsFromUsage(undefined, at).unavailableReason).toBe('not_reported');
  });

  it("reads a subscription's windows: utilization in percent, reset times as ISO", () => {
    const answer = {
      subscription_type: 'max',
      rate_limits_available: true,
      rate_limits: {
        five_hour: { utilization: 42.5, resets_at: '2026-12-01T23:00:00Z' },
        seven_day: { utilization: null, resets_at: null },
        seven_day_opus: null,
        model_scoped: [{ label: 'Fable' }],
      },
    };
    expect(limitsFromUsage(answer, at).windows).toEqual([
      { window: 'five_hour', status: null, usedPercent: 42.5, resetsAt: '2026-12-01T23:00:00.000Z' },
      { window: 'seven_day', status: null, usedPercent: null, resetsAt: null },
    ]);
  });

  it('reads a rate_limit_event window: a fraction as percent, epoch seconds as ISO, unknown status as null', () => {
    expect(
      windowFromRateLimitInfo({
        status: 'allowed_warning',
        rateLimitType: 'five_hour',
        utilization: 0.85,
        resetsAt: 1_796_000_000,
      }),
    ).toEqual({
      window: 'five_hour',
      status: 'allowed_warning',
      usedPercent: 85,
      resetsAt: new Date(1_796_000_000_000).toISOString(),
    });
    expect(windowFromRateLimitInfo({ status: 'paused' })).toEqual({
      window: 'unified',
      status: null,
      usedPercent: null,
      resetsAt: null,
    });
    expect(windowFromRateLimitInfo('nonsense')).toBeNull();
    expect(windowFromRateLimitInfo({ rateLimitType: 'Not A Name!' })).toBeNull();
  });

  it('keeps one entry per window and tells a change from a repeat', () => {
    const first = limitsWithWindow(
      null,
      { window: 'five_hour', status: 'allowed', usedPercent: 10, resetsAt: null },
      at,
    );
    const second = limitsWithWindow(
      first,
      { window: 'seven_day', status: 'allowed', usedPercent: 5, resetsAt: null },
      at,
    );
    const third = limitsWithWindow(
      second,
      { window: 'five_hour', status: 'rejected', usedPercent: 100, resetsAt: null },
      at,
    );
    expect(third.windows.map((window) => `${window.window}:${window.status}`)).toEqual([
      'seven_day:allowed',
      'five_hour:rejected',
    ]);
    expect(sameLimits(third, { ...third, reportedAt: 'later' })).toBe(true);
    expect(sameLimits(second, third)).toBe(false);
    expect(sameLimits(null, third)).toBe(false);
  });
});
