import { AgentError, type EventBody, type SerializedAgentError } from '@tether/protocol';
import type { EventWriter } from '../log/event-writer.js';
import type { TetherStore } from '../store/tether-store.js';
import type { RunWaiters } from './run-waiters.js';
import type { SessionEntry } from './session-entry.js';
import { type SessionLog, withRunEndCancellations } from './session-log.js';

export interface StoreFailureRepairParts {
  readonly store: TetherStore;
  readonly writer: EventWriter;
  readonly log: SessionLog;
  readonly runWaiters: RunWaiters;
  /** The session if it is in memory now. */
  readonly resident: (sessionId: string) => SessionEntry | undefined;
  /** Runs work with the session in memory and pinned (read back from the store if it left). */
  readonly withSession: <Result>(
    sessionId: string,
    work: (entry: SessionEntry | undefined) => Promise<Result>,
  ) => Promise<Result>;
}

/** Retried this long after a failed attempt (the last delay repeats) until the store takes the repair. */
const retryDelaysMs = [250, 1_000, 2_000, 5_000];

/** What the store said of a failure, in its own words (each store names its remedy: free disk space, start the server...). */
function storeSaid(cause: unknown): { readonly words: string; readonly details: Record<string, unknown> } {
  if (!AgentError.isInstance(cause)) return { words: 'The store refused the write.', details: {} };
  const storeReason = cause.details?.['reason'];
  return { words: cause.message, details: typeof storeReason === 'string' ? { storeReason } : {} };
}

/** The end of a run whose output the store did not take (`cause`: the store's failure that dropped it). */
function outputNotStored(cause: unknown): SerializedAgentError {
  const { words, details } = storeSaid(cause);
  return {
    code: 'store_failure',
    message: `The run's output could not be stored, so its agent was stopped and the run ended here; submit the turn again once the store takes writes. The store said: ${words}`,
    retryable: true,
    details: { reason: 'output_not_stored', ...details },
  };
}

/** While a failed session's repair cannot be stored: what its commands (session_not_stored) and its run's waiters (run_end_not_stored) get. */
function notStoredYet(reason: 'session_not_stored' | 'run_end_not_stored', cause: unknown): AgentError {
  const { words, details } = storeSaid(cause);
  const message =
    reason === 'session_not_stored'
      ? `This session's output could not be stored, and neither could the end of its run yet, so it takes no command for now; retry once the store takes writes. The store said: ${words}`
      : `The run's output could not be stored, so its agent was stopped; the run's end (failed, store_failure) is not stored yet either. It is stored once the store takes writes, or with the session's next command (if this Tether stops first, the next one on the store records the run as ended by a restart, runtime_restarted). The store said: ${words}`;
  return new AgentError({ code: 'store_failure', message, details: { reason, ...details }, cause });
}

/** Why an attempt failed. */
interface Failed {
  readonly error: unknown;
}

interface Pending {
  /** The store's failure that dropped the session's output. */
  cause: unknown;
  timer: NodeJS.Timeout | null;
  attempt: Promise<Failed | null> | null;
  retries: number;
}

/**
 * What happens after the writer dropped a session's output: the agent is stopped (its work can no
 * longer be recorded), the session's memory is rebuilt from the store (it had applied what was
 * dropped), and one small unit ends what the store still shows running (its run failed
 * store_failure, its process stopped). That unit is retried on a timer and before the session's
 * next command; until it is stored, commands on the session and waiters on its run get
 * store_failure, and the writer writes nothing of the session.
 */
export class StoreFailureRepair {
  private readonly parts: StoreFailureRepairParts;
  private readonly pending = new Map<string, Pending>();
  private closed = false;

  constructor(parts: StoreFailureRepairParts) {
    this.parts = parts;
  }

  /** The writer dropped output of these sessions, the store having failed with `cause`. */
  dropped(sessionIds: readonly string[], cause: unknown): void {
    for (const sessionId of sessionIds) {
      const entry = this.parts.resident(sessionId);
      if (entry) {
        entry.clearAllTimers();
        // A failed stop leaves the provider stoppable; the next turn or a shutdown stops it.
        entry.stopProvider('release').catch(() => undefined);
      }
      if (!this.pending.has(sessionId)) this.pending.set(sessionId, { cause, timer: null, attempt: null, retries: 0 });
      void this.attempt(sessionId);
    }
  }

  /** The session is no longer this runtime's (another took its lease): nothing of it is repaired here. */
  abandon(sessionId: string): void {
    const pending = this.pending.get(sessionId);
    if (pending?.timer) clearTimeout(pending.timer);
    this.pending.delete(sessionId);
  }

  /** Before a command on the session: its log must be consistent (one more attempt now if not), else store_failure. */
  async ensureConsistent(sessionId: string): Promise<void> {
    if (!this.pending.has(sessionId)) return;
    const failed = await this.attempt(sessionId);
    if (failed !== null) throw notStoredYet('session_not_stored', failed.error);
  }

  /** A shutdown: no more timers, and one last attempt for each session (a runtime started later ends what is left). */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.allSettled([...this.pending.keys()].map((sessionId) => this.attempt(sessionId)));
    for (const pending of this.pending.values()) if (pending.timer) clearTimeout(pending.timer);
  }

  /** One repair at a time per session; resolves with why it failed, or null once the session is consistent. */
  private attempt(sessionId: string): Promise<Failed | null> {
    const pending = this.pending.get(sessionId);
    if (!pending) return Promise.resolve(null);
    if (pending.timer) clearTimeout(pending.timer);
    pending.timer = null;
    pending.attempt ??= this.repair(sessionId).then(
      () => {
        this.pending.delete(sessionId);
        return null;
      },
      (error: unknown) => {
        pending.attempt = null;
        this.retryLater(sessionId, pending);
        return { error };
      },
    );
    return pending.attempt;
  }

  private retryLater(sessionId: string, pending: Pending): void {
    if (this.closed || this.pending.get(sessionId) !== pending) return;
    const delay = retryDelaysMs[Math.min(pending.retries, retryDelaysMs.length - 1)]!;
    pending.retries += 1;
    pending.timer = setTimeout(() => void this.attempt(sessionId), delay);
    pending.timer.unref();
  }

  private repair(sessionId: string): Promise<void> {
    return this.parts.withSession(sessionId, async (entry) => {
      try {
        await this.repairStored(sessionId, entry);
      } catch (error) {
        // The run's waiters hear why whichever step failed: the reads too (a store that is gone refuses
        // them first), not only the write of its end. Its id is the stored one once read; else memory's,
        // where the dropped output may have ended it already (its last run then). A run whose end is
        // stored after all is read as completed by its waiters, whatever this says.
        const runId = entry?.record.activeRunId ?? entry?.record.lastRun?.runId ?? null;
        if (runId !== null) this.parts.runWaiters.fail(runId, notStoredYet('run_end_not_stored', error));
        throw error;
      }
    });
  }

  private async repairStored(sessionId: string, entry: SessionEntry | undefined): Promise<void> {
    const { store, writer, log } = this.parts;
    const record = await store.getSession(sessionId);
    if (!entry || !record) {
      writer.forget(sessionId); // Nothing stored, nothing to make consistent.
      return;
    }
    const activeRun = record.activeRunId === null ? null : ((await store.getRun(record.activeRunId)) ?? null);
    const interactions = await store.listInteractions(sessionId);
    entry.rebuildFrom({
      record,
      activeRun,
      interactions: new Map(interactions.map((interaction) => [interaction.interactionRef, interaction])),
    });
    writer.restoreLastSeq(sessionId, record.lastSeq);
    // The run's end is recorded once its agent has stopped: nothing works on it unobserved after that.
    await entry.teardown.catch(() => undefined);
    const bodies: EventBody[] = [];
    if (record.activeRunId !== null) {
      await entry.loadOpenToolCalls(store, record.activeRunId);
      bodies.push(
        ...withRunEndCancellations(
          entry,
          [
            {
              type: 'run.completed',
              runId: record.activeRunId,
              outcome: 'failed',
              error: outputNotStored(this.pending.get(sessionId)?.cause),
            },
          ],
          'run_ended',
        ),
      );
    }
    if (record.liveProcess !== null && entry.isQuiet())
      bodies.push({ type: 'session.process_stopped', reason: 'released' });
    await log.repair(entry, bodies);
  }
}
