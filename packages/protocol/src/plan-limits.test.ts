import { describe, expect, it } from 'vitest';
import { type PlanLimits, shownLimitWindows } from './plan-limits.js';

const now = Date.parse('2026-12-06T05:00:00Z');
const inAnHour = '2026-12-06T06:00:00Z';

function limits(windows: PlanLimits['windows']): PlanLimits {
  return { available: true, unavailableReason: null, windows, reportedAt: '2026-12-06T04:59:00Z' };
}

describe('the plan limit windows a reader is shown', () => {
  it('a rejected window reads reached until its reset, then reset', () => {
    const rejected = limits([{ window: 'five_hour', status: 'rejected', usedPercent: 100, resetsAt: inAnHour }]);
    expect(shownLimitWindows(rejected, now)).toEqual([
      { window: 'five_hour', reset: false, usedPercent: 100, reached: true, resetsAt: inAnHour },
    ]);
    expect(shownLimitWindows(rejected, Date.parse(inAnHour) + 1)).toEqual([{ window: 'five_hour', reset: true }]);
  });

  it('the account reported allowed after it: the window no longer reads reached, as the runtime no longer holds turns', () => {
    const reopened = limits([
      { window: 'five_hour', status: 'rejected', usedPercent: 100, resetsAt: inAnHour },
      { window: 'unified', status: 'allowed', usedPercent: null, resetsAt: null },
    ]);
    expect(shownLimitWindows(reopened, now)).toEqual([
      { window: 'five_hour', reset: false, usedPercent: 100, reached: false, resetsAt: inAnHour },
    ]);
    // Rejected again after that: reached again.
    const again = limits([
      ...reopened.windows,
      { window: 'seven_day', status: 'rejected', usedPercent: 100, resetsAt: inAnHour },
    ]);
    expect(shownLimitWindows(again, now).find((window) => window.window === 'seven_day')).toMatchObject({
      reached: true,
    });
  });
});
