import type { PlanLimits } from '@tether/protocol';
import { describe, expect, it } from 'vitest';
import { describeContextUsage, describePlanLimits, formatResetTime } from './follow-up-summary.js';

const now = new Date(2026, 11, 1, 12, 0);
const limits = (windows: PlanLimits['windows']): PlanLimits => ({
  available: true,
  unavailableReason: null,
  windows,
  reportedAt: now.toISOString(),
});

describe('plan limits and context usage for tether sessions', () => {
  it('names each window shortly, with its used share and its reset in local time', () => {
    const today = new Date(2026, 11, 1, 14, 0).toISOString();
    const later = new Date(2026, 11, 4, 9, 5).toISOString();
    expect(
      describePlanLimits(
        limits([
          { window: 'five_hour', status: 'allowed_warning', usedPercent: 42.4, resetsAt: today },
          { window: 'seven_day', status: 'rejected', usedPercent: 100, resetsAt: later },
          { window: 'overage', status: null, usedPercent: null, resetsAt: null },
        ]),
        now,
      ),
    ).toBe('5h 42% (resets 14:00), 7d 100% reached (resets 2026-12-04 09:05)');
    expect(formatResetTime('not a time', now)).toBe('not a time');
  });

  it('a window past its reset no longer reads as reached, and the account window with nothing to say is left out', () => {
    const earlier = new Date(2026, 11, 1, 11, 0).toISOString();
    expect(
      describePlanLimits(
        limits([
          { window: 'five_hour', status: 'rejected', usedPercent: 100, resetsAt: earlier },
          { window: 'unified', status: 'allowed', usedPercent: null, resetsAt: null },
        ]),
        now,
      ),
    ).toBe('5h reset');
    expect(
      describePlanLimits(limits([{ window: 'unified', status: 'rejected', usedPercent: null, resetsAt: null }]), now),
    ).toBe('account reached');
  });

  it('says an API-key account has none, and nothing while the agent reported nothing', () => {
    const none = (reason: string | null): PlanLimits => ({
      ...limits([]),
      available: false,
      unavailableReason: reason,
    });
    expect(describePlanLimits(none('api_key_account'))).toBe('no plan limits: API key account');
    expect(describePlanLimits(none('not_reported'))).toBeNull();
    expect(describePlanLimits(null)).toBeNull();
    expect(describePlanLimits(limits([]))).toBeNull();
  });

  it('context usage as a rounded percentage', () => {
    expect(describeContextUsage({ model: null, totalTokens: 1, maxTokens: 3, percentage: 33.4, categories: [] })).toBe(
      'context 33%',
    );
    expect(describeContextUsage(null)).toBeNull();
  });
});
