import { type ContextUsage, type PlanLimits, accountLimitWindow, shownLimitWindows } from '@tether/protocol';

/** Claude's window names as a person reads them; an agent's other names pass through. */
const windowLabels: Readonly<Record<string, string>> = {
  [accountLimitWindow]: 'Account',
  five_hour: '5-hour',
  seven_day: '7-day',
  seven_day_opus: '7-day Opus',
  seven_day_sonnet: '7-day Sonnet',
};

/** A reset time in the reader's time zone: the hour today, with the date otherwise. */
export function formatReset(iso: string, now: Date = new Date()): string {
  const at = new Date(iso);
  if (Number.isNaN(at.getTime())) return iso;
  const time = at.toLocaleTimeString('en', { hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
  if (at.toDateString() === now.toDateString()) return time;
  return `${at.toLocaleDateString('en', { month: 'short', day: 'numeric' })} ${time}`;
}

/** The plan limits for the session header; null while the agent has reported nothing. */
export function formatPlanLimits(limits: PlanLimits | null, now: Date = new Date()): string | null {
  if (limits === null) return null;
  if (!limits.available) {
    if (limits.unavailableReason === 'api_key_account') return 'No plan limits: API key account';
    if (limits.unavailableReason === null || limits.unavailableReason === 'not_reported') return null;
    return `No plan limits: ${limits.unavailableReason}`;
  }
  const windows = shownLimitWindows(limits, now.getTime()).map((window) => {
    const label = windowLabels[window.window] ?? window.window;
    if (window.reset) return `${label} reset`;
    const used = window.usedPercent === null ? '' : ` ${Math.round(window.usedPercent)}%`;
    const resets = window.resetsAt === null ? '' : `, resets ${formatReset(window.resetsAt, now)}`;
    return `${label}${used}${window.reached ? ' (limit reached)' : ''}${resets}`;
  });
  return windows.length === 0 ? null : `Plan limits: ${windows.join(' · ')}`;
}

export function formatContextUsage(usage: ContextUsage | null): string | null {
  return usage === null ? null : `Context ${Math.round(usage.percentage)}% full after the last run`;
}
