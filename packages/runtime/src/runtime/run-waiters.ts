import type { ProtocolEvent, RunSnapshot } from '@tether/protocol';

/**
 * Callers waiting for runs to complete. A waiter is registered before the run is read, so a
 * completion published between the two cannot be missed.
 */
export class RunWaiters {
  private readonly waiters = new Map<string, Set<(run: RunSnapshot) => void>>();
  private readonly readRun: (runId: string) => Promise<RunSnapshot>;

  constructor(readRun: (runId: string) => Promise<RunSnapshot>) {
    this.readRun = readRun;
  }

  async wait(runId: string, signal?: AbortSignal): Promise<RunSnapshot> {
    const waiters = this.waiters.get(runId) ?? new Set();
    this.waiters.set(runId, waiters);
    let settle!: (run: RunSnapshot) => void;
    const forget = () => {
      waiters.delete(settle);
      if (waiters.size === 0 && this.waiters.get(runId) === waiters) this.waiters.delete(runId);
    };
    const waiting = new Promise<RunSnapshot>((resolve, reject) => {
      const onAbort = () => {
        forget();
        reject(signal?.reason ?? new Error('aborted'));
      };
      settle = (run) => {
        signal?.removeEventListener('abort', onAbort);
        resolve(run);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
    });
    waiters.add(settle);
    try {
      const run = await this.readRun(runId);
      if (run.status === 'completed') {
        forget();
        return run;
      }
    } catch (error) {
      forget();
      throw error;
    }
    return waiting;
  }

  /** Resolves the waiters of every run these just-published events complete. */
  notify(events: readonly ProtocolEvent[]): void {
    for (const event of events) {
      if (event.type !== 'run.completed') continue;
      const waiters = this.waiters.get(event.runId);
      if (!waiters) continue;
      this.waiters.delete(event.runId);
      this.readRun(event.runId).then(
        (run) => {
          for (const resolve of waiters) resolve(run);
        },
        // The run was published as completed; a store that cannot read it back leaves the read's error to getRun.
        () => {},
      );
    }
  }
}
