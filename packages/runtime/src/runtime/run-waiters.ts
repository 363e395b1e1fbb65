import type { AgentError, ProtocolEvent, RunSnapshot } from '@tether/protocol';

interface Waiter {
  readonly resolve: (run: RunSnapshot) => void;
  readonly reject: (error: AgentError) => void;
}

/**
 * Callers waiting for runs to complete. A waiter is registered before the run is read, so a
 * completion published between the two cannot be missed. A run whose end cannot be stored
 * (`fail`) rejects its waiters until `recovered`: waiting for it would otherwise never end.
 */
export class RunWaiters {
  private readonly waiters = new Map<string, Set<Waiter>>();
  private readonly unstorable = new Map<string, AgentError>();
  private readonly readRun: (runId: string) => Promise<RunSnapshot>;

  constructor(readRun: (runId: string) => Promise<RunSnapshot>) {
    this.readRun = readRun;
  }

  async wait(runId: string, signal?: AbortSignal): Promise<RunSnapshot> {
    const waiters = this.waiters.get(runId) ?? new Set();
    this.waiters.set(runId, waiters);
    let waiter!: Waiter;
    const forget = () => {
      waiters.delete(waiter);
      if (waiters.size === 0 && this.waiters.get(runId) === waiters) this.waiters.delete(runId);
    };
    const waiting = new Promise<RunSnapshot>((resolve, reject) => {
      const onAbort = () => {
        forget();
        reject(signal?.reason ?? new Error('aborted'));
      };
      waiter = {
        resolve: (run) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(run);
        },
        reject: (error) => {
          signal?.removeEventListener('abort', onAbort);
          reject(error);
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
    });
    waiters.add(waiter);
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
    const failure = this.unstorable.get(runId);
    if (failure) {
      forget();
      throw failure;
    }
    return waiting;
  }

  /** Resolves the waiters of every run these just-published events complete. */
  notify(events: readonly ProtocolEvent[]): void {
    for (const event of events) {
      if (event.type !== 'run.completed') continue;
      this.unstorable.delete(event.runId);
      const waiters = this.waiters.get(event.runId);
      if (!waiters) continue;
      this.waiters.delete(event.runId);
      this.readRun(event.runId).then(
        (run) => {
          for (const waiter of waiters) waiter.resolve(run);
        },
        // The run was published as completed; a store that cannot read it back leaves the read's error to getRun.
        () => {},
      );
    }
  }

  /** The run ended but its end cannot be stored yet: its waiters (now and until it is) get this error. */
  fail(runId: string, error: AgentError): void {
    this.unstorable.set(runId, error);
    const waiters = this.waiters.get(runId);
    if (!waiters) return;
    this.waiters.delete(runId);
    for (const waiter of waiters) waiter.reject(error);
  }
}
