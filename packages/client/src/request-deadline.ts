import { AgentError } from '@tether/protocol';

/** What every call of the client takes besides its own arguments. */
export interface RequestOptions {
  /** Aborts the call: it rejects with `runtime_stopped`, `details.reason: 'request_aborted'`. */
  readonly signal?: AbortSignal;
  /**
   * How long this call waits for the daemon's whole answer, in ms, instead of the client's limit
   * (`requestTimeoutMs` or `commandTimeoutMs`); `Infinity` waits as long as it takes.
   */
  readonly timeoutMs?: number;
}

// setTimeout fires at once for anything longer (a 32-bit signed count of ms): such a limit means none.
const longestTimerMs = 2_147_483_647;

/** A time limit as given: a number of ms above 0, Infinity for none. Reason `invalid_timeout`. */
export function checkTimeout(value: unknown, name: string): number {
  if (typeof value === 'number' && value > 0) return value;
  throw new AgentError({
    code: 'invalid_command',
    message: `${name} must be a number of milliseconds above 0 (Infinity for no limit).`,
    details: { reason: 'invalid_timeout' },
  });
}

/** Why an exchange was cut short: its time limit, or the caller's signal. */
export type DeadlineCause = 'timeout' | 'aborted';

/** One exchange's abort: the caller's signal or the time limit, whichever comes first. */
export interface RequestDeadline {
  /** Aborts the fetch and whatever of its body is still being read. */
  readonly signal: AbortSignal;
  readonly timeoutMs: number;
  /** Why the signal aborted, once it did. */
  cause(): DeadlineCause | undefined;
  /** Stops the timer and lets go of the caller's signal: the answer is in. */
  finish(): void;
}

export function startDeadline(timeoutMs: number, callerSignal: AbortSignal | undefined): RequestDeadline {
  const controller = new AbortController();
  let cause: DeadlineCause | undefined;
  const cut = (why: DeadlineCause) => {
    if (cause !== undefined) return;
    cause = why;
    controller.abort();
  };
  const onCallerAbort = () => cut('aborted');
  if (callerSignal?.aborted) cut('aborted');
  else callerSignal?.addEventListener('abort', onCallerAbort, { once: true });
  const timer = timeoutMs <= longestTimerMs ? setTimeout(() => cut('timeout'), timeoutMs) : undefined;
  return {
    signal: controller.signal,
    timeoutMs,
    cause: () => cause,
    finish() {
      clearTimeout(timer);
      callerSignal?.removeEventListener('abort', onCallerAbort);
    },
  };
}
