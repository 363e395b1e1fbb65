/** The ordered log of received requests and the waiters on it. */
import type { RecordedRequest, RecordedRequestKind, WaitForRequestsOptions } from './types.js';

export type MutableRecordedRequest = { -readonly [K in keyof RecordedRequest]: RecordedRequest[K] };

interface Waiter {
  count: number;
  kind: RecordedRequestKind | undefined;
  resolve(requests: RecordedRequest[]): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
}

export const DEFAULT_WAIT_TIMEOUT_MS = 30_000;

export class RequestLog {
  readonly records: MutableRecordedRequest[] = [];
  readonly #waiters = new Set<Waiter>();

  add(record: MutableRecordedRequest): void {
    this.records.push(record);
    for (const waiter of [...this.#waiters]) {
      const matching = this.matching(waiter.kind);
      if (matching.length >= waiter.count) this.#settle(waiter, () => waiter.resolve(matching));
    }
  }

  matching(kind: RecordedRequestKind | undefined): RecordedRequest[] {
    return kind === undefined ? [...this.records] : this.records.filter((record) => record.kind === kind);
  }

  waitFor(count: number, options: WaitForRequestsOptions = {}): Promise<RecordedRequest[]> {
    const kind = options.kind;
    const timeoutMs = options.timeoutMs ?? DEFAULT_WAIT_TIMEOUT_MS;
    const already = this.matching(kind);
    if (already.length >= count) return Promise.resolve(already);
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        count,
        kind,
        resolve,
        reject,
        timer: setTimeout(
          () => this.#settle(waiter, () => reject(new Error(this.#describeTimeout(count, kind, timeoutMs)))),
          timeoutMs,
        ),
      };
      this.#waiters.add(waiter);
    });
  }

  /** Rejects every pending waiter (the server is closing). */
  rejectAll(reason: string): void {
    for (const waiter of [...this.#waiters]) this.#settle(waiter, () => waiter.reject(new Error(reason)));
  }

  #settle(waiter: Waiter, action: () => void): void {
    clearTimeout(waiter.timer);
    this.#waiters.delete(waiter);
    action();
  }

  #describeTimeout(count: number, kind: RecordedRequestKind | undefined, timeoutMs: number): string {
    const what = kind === undefined ? 'request(s)' : `'${kind}' request(s)`;
    const got = this.matching(kind).length;
    const seen = this.records.map((record) => `${record.method} ${record.path} [${record.kind}]`).join(', ') || 'none';
    return `fake anthropic api: waited ${timeoutMs} ms for ${count} ${what} but only ${got} arrived (all requests so far: ${seen})`;
  }
}
