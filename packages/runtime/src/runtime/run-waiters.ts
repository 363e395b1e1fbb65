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
  /** Those told when a run's end is published here, without reading the run (ended()). */
  private readonly endWatchers = new Map<string, Set<() => void>>();
  /** The session of each run waited for (known once the run was read). */
  private readonly sessionOfRun = new Map<string, string>();
  private readonly readRun: (runId: string) => Promise<RunSnapshot>;
  private readonly onWaiting: ((sessionId: string) => void) | undefined;

  /**
   * onWaiting: a run of this session is now waited for (found still running). A runtime sharing its
   * store learns of another runtime's runs ending through it.
   */
  constructor(readRun: (runId: string) => Promise<RunSnapshot>, onWaiting?: (sessionId: string) => void) {
    this.readRun = readRun;
    this.onWaiting = onWaiting;
  }

  /** Whether a run of this session is waited for. */
  isWaitedOn(sessionId: string): boolean {
    for (const [runId, waited] of this.sessionOfRun) if (waited === sessionId && this.waiters.has(runId)) return true;
    return false;
  }

  /** The sessions whose runs are waited for. */
  waitedSessions(): Set<string> {
    const sessions = new Set<string>();
    for (const [runId, sessionId] of this.sessionOfRun) if (this.waiters.has(runId)) sessions.add(sessionId);
    return sessions;
  }

  /** Reads the waited runs of this session again and resolves those that completed (their end may not have been seen here). */
  async recheck(sessionId: string): Promise<void> {
    const runIds = [...this.sessionOfRun].flatMap(([runId, waited]) => (waited === sessionId ? [runId] : []));
    await Promise.all(
      runIds.map(async (runId) => {
        const run = await this.readRun(runId).catch(() => undefined);
        if (run?.status === 'completed') this.resolve(runId, run);
      }),
    );
  }

  private resolve(runId: string, run: RunSnapshot): void {
    const waiters = this.waiters.get(runId);
    this.sessionOfRun.delete(runId);
    if (!waiters) return;
    this.waiters.delete(runId);
    for (const waiter of waiters) waiter.resolve(run);
  }

  async wait(runId: string, signal?: AbortSignal): Promise<RunSnapshot> {
    // An abort listener never fires for a signal aborted already (a forced shutdown's, made before the drain).
    if (signal?.aborted) throw signal.reason ?? new Error('aborted');
    const waiters = this.waiters.get(runId) ?? new Set();
    this.waiters.set(runId, waiters);
    let waiter!: Waiter;
    let onAbort = () => {};
    const forget = () => {
      waiters.delete(waiter);
      signal?.removeEventListener('abort', onAbort);
      if (waiters.size === 0 && this.waiters.get(runId) === waiters) {
        this.waiters.delete(runId);
        this.sessionOfRun.delete(runId);
      }
    };
    const waiting = new Promise<RunSnapshot>((resolve, reject) => {
      onAbort = () => {
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
    // Returned only when the run is still running once read: on the other ways out (found completed,
    // a failed read) nobody awaits it, and a signal aborting then (a shutdown's grace timing out) made
    // an unhandled rejection of it.
    waiting.catch(() => {});
    waiters.add(waiter);
    try {
      // A wait given up (its signal: a shutdown's grace) is not held by a read of an unreachable store.
      const run = await (signal ? Promise.race([this.readRun(runId), waiting]) : this.readRun(runId));
      if (run.status === 'completed') {
        forget();
        return run;
      }
      if (this.waiters.get(runId) === waiters && !this.sessionOfRun.has(runId)) {
        this.sessionOfRun.set(runId, run.sessionId);
        this.onWaiting?.(run.sessionId);
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

  /**
   * Resolves once this runtime publishes the run's end (or cannot store it), or after `timeoutMs`,
   * whichever comes first; never rejects and reads nothing. For a run known to be running: call it
   * before whatever may end the run.
   */
  ended(runId: string, timeoutMs: number): Promise<void> {
    return new Promise((resolve) => {
      const watchers = this.endWatchers.get(runId) ?? new Set<() => void>();
      this.endWatchers.set(runId, watchers);
      let timer: NodeJS.Timeout | undefined;
      const done = () => {
        clearTimeout(timer);
        watchers.delete(done);
        if (watchers.size === 0 && this.endWatchers.get(runId) === watchers) this.endWatchers.delete(runId);
        resolve();
      };
      watchers.add(done);
      // The bound starts once the caller's synchronous work is done: a stop watches its run's end, then
      // writes its request, and a timer made there (cold, ~0.03 ms) delayed the write.
      queueMicrotask(() => {
        if (watchers.has(done)) timer = setTimeout(done, timeoutMs);
      });
    });
  }

  private endWatched(runId: string): void {
    const watchers = this.endWatchers.get(runId);
    if (watchers) for (const done of [...watchers]) done();
  }

  /** Resolves the waiters of every run these just-published events complete. */
  notify(events: readonly ProtocolEvent[]): void {
    for (const event of events) {
      if (event.type !== 'run.completed') continue;
      this.endWatched(event.runId);
      this.unstorable.delete(event.runId);
      const waiters = this.waiters.get(event.runId);
      if (!waiters) continue;
      this.waiters.delete(event.runId);
      this.sessionOfRun.delete(event.runId);
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
    this.endWatched(runId);
    const waiters = this.waiters.get(runId);
    if (!waiters) return;
    this.waiters.delete(runId);
    this.sessionOfRun.delete(runId);
    for (const waiter of waiters) waiter.reject(error);
  }
}
