import { AgentError } from '@tether/protocol';
import type { TetherStore } from '../store/tether-store.js';

/** How long a forced stop waits on its store at a time before it stops waiting (TetherStore.abandon). */
export const forcedStoreWaitMs = 3_000;

/**
 * A stopping runtime's waits on its store, bounded once the stop is forced: a store that leaves one of
 * them unanswered for `boundMs` (a PostgreSQL server stopped or cut off mid-statement) is abandoned, so
 * the stop ends. Only time spent waiting on the store counts, never the grace, the agents' ends or git:
 * a healthy store's last writes (the runs' ends) are kept however long the rest takes.
 */
export class ForcedStoreBound {
  private readonly store: TetherStore;
  private readonly onAbandon: (error: AgentError) => void;
  private readonly boundMs: number;
  private waiting = 0;
  private forced = false;
  private over = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(store: TetherStore, onAbandon: (error: AgentError) => void, boundMs = forcedStoreWaitMs) {
    this.store = store;
    this.onAbandon = onAbandon;
    this.boundMs = boundMs;
  }

  /** The stop is forced from now on: a store wait under way is bounded from now, later ones from their start. */
  force(): void {
    this.forced = true;
    this.arm();
  }

  async wait<Result>(work: Promise<Result>): Promise<Result> {
    this.waiting += 1;
    this.arm();
    try {
      return await work;
    } finally {
      this.waiting -= 1;
      if (this.waiting === 0) this.disarm();
    }
  }

  /** The store has closed: there is nothing left to bound. */
  finish(): void {
    this.over = true;
    this.disarm();
  }

  private arm(): void {
    if (!this.forced || this.waiting === 0 || this.over || this.timer !== undefined || !this.store.abandon) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.over = true;
      this.onAbandon(
        new AgentError({
          code: 'store_failure',
          message: `The store left a forced stop waiting ${this.boundMs / 1000} s: stopped waiting for it. What it had not stored is ended by the next runtime on this store.`,
          details: { reason: 'store_abandoned' },
        }),
      );
      this.store.abandon?.();
    }, this.boundMs);
    this.timer.unref();
  }

  private disarm(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}
