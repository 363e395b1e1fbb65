/** How long after a logged occurrence of a key the next ones of that key are only counted (by default). */
export const repeatLogIntervalMs = 60_000;

/** The occurrences of a key held back in one interval: how many, from when to when (ISO times). */
export interface HeldBack<Key> {
  readonly key: Key;
  readonly counted: number;
  readonly since: string;
  readonly until: string;
}

/** One key's interval: when its logged occurrence was, and the occurrences counted since. */
interface KeyInterval {
  startedAt: number;
  counted: number;
  firstCountedAt: number;
  lastCountedAt: number;
  /** Cancels the report due when the interval ends, set once something is counted in it. */
  cancelReport: (() => void) | null;
}

/** Calls `callback` after `delayMs` without keeping the process alive for it; returns how to cancel it. */
export type RepeatLogTimer = (callback: () => void, delayMs: number) => () => void;

export interface RepeatLogOptions {
  readonly intervalMs?: number;
  readonly now?: () => number;
  readonly timer?: RepeatLogTimer;
}

function unreferencedTimer(callback: () => void, delayMs: number): () => void {
  const timer = setTimeout(callback, delayMs);
  timer.unref();
  return () => clearTimeout(timer);
}

/**
 * Occurrences something outside the daemon can cause as fast as it likes (a refused request, a
 * notification a receiver refuses or has no room for): a line each would fill the log. The first
 * occurrence of a key in an interval is logged by the caller in full (`occurred` says so); the ones
 * after it are only counted, and `report` is given their count once, when the interval ends (a
 * receiver down for an hour is told of every minute of it, not at its next notification), or by
 * flush() (at shutdown). Each key has its own interval, so a flood of one neither hides nor holds back
 * another.
 */
export class RepeatLog<Key> {
  private readonly intervals = new Map<Key, KeyInterval>();
  private readonly report: (heldBack: HeldBack<Key>) => void;
  private readonly intervalMs: number;
  private readonly now: () => number;
  private readonly timer: RepeatLogTimer;

  constructor(report: (heldBack: HeldBack<Key>) => void, options: RepeatLogOptions = {}) {
    this.report = report;
    this.intervalMs = options.intervalMs ?? repeatLogIntervalMs;
    this.now = options.now ?? Date.now;
    this.timer = options.timer ?? unreferencedTimer;
  }

  /** Counts an occurrence of `key`; true when the caller logs it in full (the first of its interval). */
  occurred(key: Key): boolean {
    const now = this.now();
    const interval = this.intervals.get(key);
    if (interval !== undefined && now - interval.startedAt < this.intervalMs) {
      if (interval.counted === 0) {
        interval.firstCountedAt = now;
        interval.cancelReport = this.timer(() => this.flushKey(key), interval.startedAt + this.intervalMs - now);
      }
      interval.counted += 1;
      interval.lastCountedAt = now;
      return false;
    }
    this.flushKey(key);
    this.intervals.set(key, { startedAt: now, counted: 0, firstCountedAt: 0, lastCountedAt: 0, cancelReport: null });
    return true;
  }

  /** Reports the occurrences held back and not reported yet, if any, once per key. */
  flush(): void {
    for (const key of this.intervals.keys()) this.flushKey(key);
  }

  private flushKey(key: Key): void {
    const interval = this.intervals.get(key);
    if (interval === undefined || interval.counted === 0) return;
    interval.cancelReport?.();
    interval.cancelReport = null;
    const counted = interval.counted;
    interval.counted = 0;
    this.report({
      key,
      counted,
      since: new Date(interval.firstCountedAt).toISOString(),
      until: new Date(interval.lastCountedAt).toISOString(),
    });
  }
}
