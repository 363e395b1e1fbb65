/** How a subscription reconnects after its stream breaks. */
export interface ReconnectOptions {
  /** Delay before the first reconnection attempt (default 250 ms); it doubles after each failed one. */
  readonly initialDelayMs?: number;
  /** The longest delay between attempts (default 10 s). */
  readonly maxDelayMs?: number;
  /**
   * Consecutive attempts that fail to open the stream before the subscription gives up and throws
   * (default: never give up). An attempt that opens the stream starts the count again.
   */
  readonly maxAttempts?: number;
}

export interface ReconnectSchedule {
  readonly initialDelayMs: number;
  readonly maxDelayMs: number;
  readonly maxAttempts: number;
}

export function reconnectSchedule(options: ReconnectOptions = {}): ReconnectSchedule {
  const initialDelayMs = Math.max(0, options.initialDelayMs ?? 250);
  return {
    initialDelayMs,
    maxDelayMs: Math.max(initialDelayMs, options.maxDelayMs ?? 10_000),
    maxAttempts: Math.max(0, options.maxAttempts ?? Number.POSITIVE_INFINITY),
  };
}

/**
 * Exponential backoff with jitter (between half and all of the step), so many clients cut off
 * at once by a daemon restart do not all come back in the same millisecond.
 */
export function delayBeforeAttempt(attempt: number, schedule: ReconnectSchedule): number {
  const step = Math.min(schedule.maxDelayMs, schedule.initialDelayMs * 2 ** Math.max(0, attempt - 1));
  return step / 2 + Math.random() * (step / 2);
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
