import { AgentError } from '@tether/protocol';
import { checkTimeout } from './request-deadline.js';

/** How a subscription reconnects after its stream breaks. */
export interface ReconnectOptions {
  /** Delay before the first reconnection attempt (default 250 ms); it doubles after each failed one. */
  readonly initialDelayMs?: number;
  /** The longest delay between attempts (default 10 s). */
  readonly maxDelayMs?: number;
  /**
   * Consecutive attempts that fail to open the stream before the subscription gives up and throws
   * (default: never give up). An attempt that opens the stream and gets something on it (an event, a
   * ping) starts the count again; one the daemon accepts and ends without a byte counts as failed.
   * A stream that carried something and then ended (an overflow, a daemon restarting) is always
   * reopened once, so 0 gives up at the first attempt that fails, not at the first end.
   */
  readonly maxAttempts?: number;
  /**
   * A stream that sends nothing at all (no event, no `: ping`) for this long while the client waits
   * on it, or whose answer does not start within it, counts as broken: the subscription reconnects
   * from its last seq. Default 45,000 ms, three of the daemon's ping intervals (15 s by default; a
   * daemon started with a longer `pingIntervalMs` needs a longer limit). Infinity never gives up on a
   * silent stream.
   */
  readonly silenceLimitMs?: number;
}

export interface ReconnectSchedule {
  readonly initialDelayMs: number;
  readonly maxDelayMs: number;
  readonly maxAttempts: number;
  readonly silenceLimitMs: number;
}

/** The daemon pings a quiet stream every 15 s (`pingIntervalMs`); missing three in a row is no longer a quiet stream. */
const defaultSilenceLimitMs = 3 * 15_000;

export function reconnectSchedule(options: ReconnectOptions = {}): ReconnectSchedule {
  const initialDelayMs = checkTimeout(options.initialDelayMs ?? 250, 'reconnect.initialDelayMs');
  return {
    initialDelayMs,
    maxDelayMs: Math.max(initialDelayMs, checkTimeout(options.maxDelayMs ?? 10_000, 'reconnect.maxDelayMs')),
    maxAttempts: checkAttempts(options.maxAttempts ?? Number.POSITIVE_INFINITY),
    silenceLimitMs: checkTimeout(options.silenceLimitMs ?? defaultSilenceLimitMs, 'reconnect.silenceLimitMs'),
  };
}

function checkAttempts(value: unknown): number {
  if (typeof value === 'number' && value >= 0 && (Number.isInteger(value) || value === Number.POSITIVE_INFINITY))
    return value;
  throw new AgentError({
    code: 'invalid_command',
    message: 'reconnect.maxAttempts must be a whole number of at least 0 (Infinity, the default, never gives up).',
    details: { reason: 'invalid_attempts' },
  });
}

/**
 * Exponential backoff with jitter (between half and all of the step), so many clients cut off
 * at once by a daemon restart do not all come back in the same millisecond.
 */
export function delayBeforeAttempt(attempt: number, schedule: ReconnectSchedule): number {
  const step = Math.min(schedule.maxDelayMs, schedule.initialDelayMs * 2 ** Math.max(0, attempt - 1));
  return step / 2 + Math.random() * (step / 2);
}

/**
 * A `Retry-After` header in milliseconds (delta-seconds or an HTTP date); undefined when absent or
 * unreadable. The caller caps it (reconnect.maxDelayMs).
 */
export function retryAfterMsOf(headers: Headers): number | undefined {
  const value = headers.get('retry-after')?.trim();
  if (value === undefined || value === '') return undefined;
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

/** Resolves after `milliseconds`, or at once when the signal aborts (the caller checks which). */
export function waitUnlessAborted(milliseconds: number, signal: AbortSignal | undefined): Promise<void> {
  if (signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const finish = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', finish);
      resolve();
    };
    const timer = setTimeout(finish, milliseconds);
    signal?.addEventListener('abort', finish, { once: true });
  });
}
