import type { DaemonLogger } from './create-logger.js';

/** How long after a logged refusal the next ones are only counted. */
const refusalLogIntervalMs = 60_000;

/** The request-log fields a refusal may carry: none of them is taken from the path, the query or a header. */
interface RefusalFields {
  readonly method: string;
  readonly route: string;
  readonly durationMs: number;
}

/**
 * The log of requests answered 401 (no valid token), rate-limited: any local process can send them as
 * fast as it likes, and a line each would fill the log. The first refusal of an interval is logged as
 * a request; the ones after it in the interval are only counted, and one line says how many there
 * were, from when to when: written by the first refusal after the interval, or by flush() (at
 * shutdown). The requests counter (tether_http_requests_total) still counts every one as it happens.
 */
export class RefusedRequestLog {
  private intervalStartedAt: number | null = null;
  private counted = 0;
  private firstCountedAt = 0;
  private lastCountedAt = 0;

  private readonly logger: DaemonLogger;
  private readonly intervalMs: number;
  private readonly now: () => number;

  constructor(logger: DaemonLogger, options: { readonly intervalMs?: number; readonly now?: () => number } = {}) {
    this.logger = logger;
    this.intervalMs = options.intervalMs ?? refusalLogIntervalMs;
    this.now = options.now ?? Date.now;
  }

  refused(fields: RefusalFields): void {
    const now = this.now();
    if (this.intervalStartedAt !== null && now - this.intervalStartedAt < this.intervalMs) {
      if (this.counted === 0) this.firstCountedAt = now;
      this.counted += 1;
      this.lastCountedAt = now;
      return;
    }
    this.flush();
    this.intervalStartedAt = now;
    this.logger.info({ ...fields, status: 401, errorCode: 'unauthorized' }, 'request');
  }

  /** Writes the count of the refusals not logged yet, if any. */
  flush(): void {
    if (this.counted === 0) return;
    this.logger.warn(
      {
        status: 401,
        errorCode: 'unauthorized',
        refused: this.counted,
        since: new Date(this.firstCountedAt).toISOString(),
        until: new Date(this.lastCountedAt).toISOString(),
      },
      `${this.counted} more requests refused without a valid token (401); they were counted, not logged one by one`,
    );
    this.counted = 0;
  }
}
