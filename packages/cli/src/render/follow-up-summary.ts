import {
  type ContextUsage,
  type PlanLimits,
  type SessionSnapshot,
  accountLimitWindow,
  shownLimitWindows,
} from '@tether/protocol';
import { plural, terminalSafe } from './human-renderer.js';

/** Claude's window names, shortened for one line; an agent's other names pass through. */
const windowLabels: Readonly<Record<string, string>> = {
  [accountLimitWindow]: 'account',
  five_hour: '5h',
  seven_day: '7d',
  seven_day_opus: '7d opus',
  seven_day_sonnet: '7d sonnet',
};

function twoDigits(value: number): string {
  return String(value).padStart(2, '0');
}

/** A reset time in the reader's local time: the hour alone today, with the date otherwise. */
export function formatResetTime(iso: string, now: Date = new Date()): string {
  const at = new Date(iso);
  if (Number.isNaN(at.getTime())) return terminalSafe(iso);
  const time = `${twoDigits(at.getHours())}:${twoDigits(at.getMinutes())}`;
  if (at.toDateString() === now.toDateString()) return time;
  return `${at.getFullYear()}-${twoDigits(at.getMonth() + 1)}-${twoDigits(at.getDate())} ${time}`;
}

/**
 * The plan limits in a few words ("5h 42% (resets 14:00), 7d 10%"); what an account without any
 * says; null when the agent reported nothing yet.
 */
export function describePlanLimits(limits: PlanLimits | null | undefined, now?: Date): string | null {
  if (!limits) return null;
  if (!limits.available) {
    if (limits.unavailableReason === 'api_key_account') return 'no plan limits: API key account';
    return limits.unavailableReason === 'not_reported' || limits.unavailableReason === null
      ? null
      : `no plan limits: ${terminalSafe(limits.unavailableReason)}`;
  }
  const windows = shownLimitWindows(limits, (now ?? new Date()).getTime()).map((window) => {
    const label = windowLabels[window.window] ?? terminalSafe(window.window);
    if (window.reset) return `${label} reset`;
    const used = window.usedPercent === null ? '' : ` ${Math.round(window.usedPercent)}%`;
    const resets = window.resetsAt === null ? '' : ` (resets ${formatResetTime(window.resetsAt, now)})`;
    return `${label}${used}${window.reached ? ' reached' : ''}${resets}`;
  });
  return windows.length === 0 ? null : windows.join(', ');
}

export function describeContextUsage(usage: ContextUsage | null | undefined): string | null {
  return usage ? `context ${Math.round(usage.percentage)}%` : null;
}

/** A session's queued follow-ups, plan limits and context usage as `tether sessions` columns ('' when none). */
export function followUpColumns(session: SessionSnapshot, now?: Date): string {
  const queued = session.queuedInputs.length;
  const columns = [
    queued > 0 ? `${plural(queued, 'input')} queued` : null,
    describePlanLimits(session.limits, now),
    describeContextUsage(session.contextUsage),
  ].filter((column) => column !== null);
  return columns.map((column) => ` · ${column}`).join('');
}
