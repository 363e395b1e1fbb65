import { z } from 'zod';
import { AgentError } from './errors/agent-error.js';
import { SessionState } from './session-snapshot.js';

/**
 * What a host may ask the reads for (a page of sessions, a page of a session's log, where a stream
 * starts), one copy for every surface: the runtime's read methods check the values they are given
 * with these, and the daemon checks its query strings with them once it has read them as numbers.
 * A value that breaks a rule is `invalid_command` with a `details.reason`; none is echoed back.
 */

function invalidRead(message: string, reason: string): AgentError {
  return new AgentError({ code: 'invalid_command', message, details: { reason } });
}

/** A query string of decimal digits as its number (at most 15 digits); NaN for anything else, which every rule below refuses. */
export function wholeNumberOf(text: string): number {
  const trimmed = text.trim();
  return /^\d{1,15}$/.test(trimmed) ? Number(trimmed) : Number.NaN;
}

/** The session a read names: a string (an unknown one is session_not_found, not this). Reason `invalid_session_id`. */
export function checkSessionIdArgument(value: unknown): string {
  if (typeof value === 'string' && value.length <= 200) return value;
  throw invalidRead(
    'Name the session by its id (a string such as ses_ followed by 32 hex digits, as open_session answered).',
    'invalid_session_id',
  );
}

/** A session state to list by. Reason `invalid_state`. */
export function checkSessionState(value: unknown): SessionState {
  const parsed = SessionState.safeParse(value);
  if (parsed.success) return parsed.data;
  throw invalidRead(`"state" must be one of ${SessionState.options.join(', ')}.`, 'invalid_state');
}

/**
 * How many a page holds: a whole number from 1; above `most` (when given) it reads `most`. Reason
 * `invalid_limit`.
 */
export function checkPageLimit(value: unknown, most?: number): number {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 1)
    return most === undefined ? value : Math.min(value, most);
  throw invalidRead(
    `"limit" must be a whole number from 1${most === undefined ? '' : ` (at most ${most} are answered at once)`}.`,
    'invalid_limit',
  );
}

/** Where a read of a session's log starts: after this seq, a whole number from 0. Reason `invalid_start_seq`. */
export function checkStartSeq(value: unknown, where: string): number {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return value;
  throw invalidRead(
    `${where} must be a sequence number (a non-negative integer), the seq of the last event you have.`,
    'invalid_start_seq',
  );
}

/** Where a subscription starts: after `afterSeq`, from the first event when it is left out. */
export function checkSubscriptionStart(afterSeq: unknown): number {
  return afterSeq === undefined ? 0 : checkStartSeq(afterSeq, '"afterSeq"');
}

/** A session's place in the newest-first order of a listing (a listed session itself will do: other fields are left out). */
const ListingPosition = z.object({
  createdAt: z.string().min(1).max(100),
  sessionId: z.string().min(1).max(100),
});

/**
 * Where a listing goes on: the position `{createdAt, sessionId}` of the last session of the page
 * before. Reason `invalid_cursor`, with `message` saying where positions come from on that surface.
 */
export function checkSessionPosition(
  value: unknown,
  message: string,
): { readonly createdAt: string; readonly sessionId: string } {
  const parsed = ListingPosition.safeParse(value);
  if (parsed.success) return { createdAt: parsed.data.createdAt, sessionId: parsed.data.sessionId };
  throw invalidRead(message, 'invalid_cursor');
}
