import { z } from 'zod';

/**
 * One window of the account's plan limits as the agent reports it (Claude: five_hour, seven_day,
 * seven_day_opus, seven_day_sonnet, overage, …; an agent's own names pass through).
 */
export const LimitWindow = z.strictObject({
  window: z.string().min(1).max(100),
  /** allowed, allowed_warning (close to the limit), rejected (at it: turns fail until resetsAt); null when not reported. */
  status: z.enum(['allowed', 'allowed_warning', 'rejected']).nullable(),
  /** How much of the window is used, 0–100 (may pass 100 with overage); null when not reported. */
  usedPercent: z.number().min(0).nullable(),
  /** ISO-8601; null when not reported. */
  resetsAt: z.string().max(40).nullable(),
});
export type LimitWindow = z.infer<typeof LimitWindow>;

/**
 * The window that stands for the account as a whole: what an agent reports when it names no window
 * (Claude: a rate_limit_event without a rateLimitType, whose status is the account's). Reported
 * allowed (or allowed_warning) after another window was reported rejected, it says that window
 * no longer refuses turns.
 */
export const accountLimitWindow = 'unified';

/**
 * The account's plan limits as last reported. Subscription accounts have them; API-key (and cloud
 * provider) accounts do not: `available` false with the reason, rather than an empty list that
 * would read as "no limit reached".
 */
export const PlanLimits = z.strictObject({
  available: z.boolean(),
  /** Why there are none: api_key_account, not_reported (the agent said nothing yet), or the agent's own reason. */
  unavailableReason: z.string().max(100).nullable(),
  /** In the order they were last reported, the latest last (a window reported again moves to the end). */
  windows: z.array(LimitWindow).max(50),
  /** When Tether learned this (ISO-8601). */
  reportedAt: z.string().max(40),
});
export type PlanLimits = z.infer<typeof PlanLimits>;

/** How full the agent's context window is (get_context_usage, and after each run). */
export const ContextUsage = z.strictObject({
  model: z.string().max(200).nullable(),
  totalTokens: z.number().nonnegative(),
  maxTokens: z.number().nonnegative(),
  percentage: z.number().nonnegative(),
  categories: z.array(z.strictObject({ name: z.string().max(200), tokens: z.number().nonnegative() })).max(100),
});
export type ContextUsage = z.infer<typeof ContextUsage>;

/** A window as a reader should see it now: reset since it was reported, or as reported. */
export type ShownLimitWindow =
  | { readonly window: string; readonly reset: true }
  | {
      readonly window: string;
      readonly reset: false;
      readonly usedPercent: number | null;
      readonly reached: boolean;
      readonly resetsAt: string | null;
    };

/**
 * What of the reported windows still holds at `nowMs`, for a reader (the CLI, the web UI). A window
 * past its reset has reset: its share and its "reached" no longer hold (the agent reports again at
 * its next turn). One that reports no share, no limit reached and no reset says nothing and is left out.
 */
export function shownLimitWindows(limits: PlanLimits, nowMs: number): ShownLimitWindow[] {
  // The account reported allowed after a window was reported rejected: that window no longer
  // refuses turns (as the runtime reads it, starting held follow-ups), so it no longer reads reached.
  const reopenedAt = limits.windows.findLastIndex(
    (window) =>
      window.window === accountLimitWindow && (window.status === 'allowed' || window.status === 'allowed_warning'),
  );
  return limits.windows.flatMap((window, index): ShownLimitWindow[] => {
    if (window.resetsAt !== null && Date.parse(window.resetsAt) <= nowMs)
      return [{ window: window.window, reset: true }];
    const reached = window.status === 'rejected' && index > reopenedAt;
    if (window.usedPercent === null && !reached && window.resetsAt === null) return [];
    return [
      { window: window.window, reset: false, usedPercent: window.usedPercent, reached, resetsAt: window.resetsAt },
    ];
  });
}
