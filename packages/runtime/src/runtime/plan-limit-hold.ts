import { type PlanLimits, type SerializedAgentError, accountLimitWindow } from '@tether/protocol';

/** The plan limit window that refuses turns now, as last reported: until when, and its name. */
export interface ClosedWindow {
  /** ISO-8601: the latest reset among the rejected windows (all of them have to reopen). */
  readonly until: string;
  readonly window: string;
}

/**
 * The window that refuses turns at `nowMs` by the last report: a rejected one whose reset is still
 * ahead. A rejected window with no reset time closes nothing here: nobody could say when to try again,
 * so the API's own answer decides. Windows are listed in the order they were reported: the account
 * as a whole reported allowed after a window was rejected (the API let a turn through since) says
 * that window no longer refuses turns, whatever its own last report.
 */
export function closedPlanWindow(limits: PlanLimits | null | undefined, nowMs: number): ClosedWindow | undefined {
  if (!limits?.available) return undefined;
  let closed: { until: number; window: string } | undefined;
  for (const window of limits.windows) {
    if (window.window === accountLimitWindow && (window.status === 'allowed' || window.status === 'allowed_warning')) {
      closed = undefined;
      continue;
    }
    if (window.status !== 'rejected' || window.resetsAt === null) continue;
    const until = Date.parse(window.resetsAt);
    if (!(until > nowMs) || (closed && closed.until >= until)) continue;
    closed = { until, window: window.window };
  }
  return closed && { until: new Date(closed.until).toISOString(), window: closed.window };
}

const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** A reset time as a person reads it, in UTC (the message is stored; a reader's zone is not known): "14:05 UTC on 5 Dec 2026". */
function readableResetTime(iso: string): string {
  const date = new Date(iso);
  const pad = (value: number) => String(value).padStart(2, '0');
  const seconds = date.getUTCSeconds() === 0 ? '' : `:${pad(date.getUTCSeconds())}`;
  return `${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}${seconds} UTC on ${date.getUTCDate()} ${months[date.getUTCMonth()]} ${date.getUTCFullYear()}`;
}

/**
 * A run's API error as the plan limit explains it: a refusal (HTTP 429, or one the provider marked
 * plan_limit) while the last report says a window is closed names the window's reset (ISO in
 * details.resetsAt, readable in the message) and what to do. Any other error is returned as it is.
 */
export function withPlanLimitNamed(
  error: SerializedAgentError,
  closed: ClosedWindow | undefined,
  queuedFollowUps: number,
): SerializedAgentError {
  const planRefusal = error.details?.reason === 'plan_limit' || error.details?.httpStatus === 429;
  if (error.code !== 'provider_api_error' || !planRefusal || !closed) return error;
  const queued =
    queuedFollowUps === 0
      ? ''
      : queuedFollowUps === 1
        ? ' The follow-up queued in this session waits for the reset and then starts by itself; withdraw it (cancel_queued_input) if it should not run.'
        : ` The ${queuedFollowUps} follow-ups queued in this session wait for the reset and then start by themselves; withdraw them (cancel_queued_input) if they should not run.`;
  return {
    ...error,
    message: `The account's plan limit is reached (its ${closed.window} window): the model API refuses turns until it resets at ${readableResetTime(closed.until)}. Wait until then, then send a short turn such as "continue": the agent keeps this turn's input in its conversation.${queued}`,
    retryable: true,
    details: { ...error.details, reason: 'plan_limit', resetsAt: closed.until },
  };
}
