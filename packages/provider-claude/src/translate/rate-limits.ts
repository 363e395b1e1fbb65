import { type LimitWindow, type PlanLimits, accountLimitWindow } from '@tether/protocol';

const statuses = new Set(['allowed', 'allowed_warning', 'rejected']);
const windowName = /^[a-z0-9_]{1,100}$/;

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

function percent(value: unknown, scale: number): number | null {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value * scale : null;
}

function isoOf(value: unknown): string | null {
  if (typeof value === 'number' && Number.isFinite(value) && value > 0) {
    const date = new Date(value * 1000);
    return Number.isNaN(date.getTime()) ? null : date.toISOString();
  }
  if (typeof value === 'string' && value.length <= 40 && !Number.isNaN(Date.parse(value)))
    return new Date(value).toISOString();
  return null;
}

/**
 * The get_usage answer as plan limits. Its windows report utilization in percent (0–100) and reset
 * times as ISO strings (sdk.d.ts SDKControlGetUsageResponse); an API-key account has none
 * (rate_limits_available false), which the CLI 2.1.332 answers for every account the fake API serves.
 */
export function limitsFromUsage(response: unknown, reportedAt: string): PlanLimits {
  const answer = record(response);
  if (answer?.rate_limits_available !== true) {
    const apiKey = answer?.rate_limits_available === false && answer.subscription_type == null;
    return {
      available: false,
      unavailableReason: apiKey ? 'api_key_account' : 'not_reported',
      windows: [],
      reportedAt,
    };
  }
  const windows: LimitWindow[] = [];
  for (const [window, value] of Object.entries(record(answer.rate_limits) ?? {})) {
    const entry = record(value);
    if (!entry || !windowName.test(window)) continue;
    windows.push({
      window,
      status: null,
      usedPercent: percent(entry.utilization, 1),
      resetsAt: isoOf(entry.resets_at),
    });
  }
  return { available: true, unavailableReason: null, windows: windows.slice(0, 50), reportedAt };
}

/**
 * One window from a rate_limit_event's rate_limit_info (SDKRateLimitInfo). Its utilization is read
 * as a fraction (0–1, the unified rate-limit headers' unit) and its resetsAt as epoch seconds; the CLI
 * sends none of these with an API key, so that unit is the types' and the headers', not observed.
 */
export function windowFromRateLimitInfo(info: unknown): LimitWindow | null {
  const entry = record(info);
  if (!entry) return null;
  const type = typeof entry.rateLimitType === 'string' ? entry.rateLimitType : accountLimitWindow;
  if (!windowName.test(type)) return null;
  return {
    window: type,
    status:
      typeof entry.status === 'string' && statuses.has(entry.status) ? (entry.status as LimitWindow['status']) : null,
    usedPercent: percent(entry.utilization, 100),
    resetsAt: isoOf(entry.resetsAt),
  };
}

/** The limits known so far with one window replaced (or added). */
export function limitsWithWindow(previous: PlanLimits | null, window: LimitWindow, reportedAt: string): PlanLimits {
  const others = (previous?.available ? previous.windows : []).filter((known) => known.window !== window.window);
  return { available: true, unavailableReason: null, windows: [...others, window].slice(-50), reportedAt };
}

/** Whether two reports say the same (the time they were made aside). */
export function sameLimits(a: PlanLimits | null, b: PlanLimits): boolean {
  return a !== null && JSON.stringify({ ...a, reportedAt: '' }) === JSON.stringify({ ...b, reportedAt: '' });
}
