export interface ShutdownOptions {
  /**
   * Ask every active run to stop (as interrupt_run does) and give them this long to end on their
   * own, as `interrupted`; runs still active then are completed `interrupted` (runtime_stopped).
   * 0 (the default) completes them at once without asking the agent.
   */
  readonly graceMs?: number;
  /**
   * End the agent processes at once (the provider's forced stop: SIGKILL to the Claude process
   * group) instead of EOF, then SIGTERM, then SIGKILL: for a host that must exit now.
   */
  readonly force?: boolean;
}

/**
 * The bounded wait of a shutdown. A later shutdown call can shorten it (a second signal means
 * "now"); `signal` aborts when it is over.
 */
export class ShutdownGrace {
  private readonly controller = new AbortController();
  private readonly startedAt = Date.now();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private deadline: number;

  constructor(graceMs: number) {
    this.deadline = this.startedAt + Math.max(0, graceMs);
    this.arm();
  }

  /** Ends the wait now that nothing is left to wait for (no timer outlives the shutdown). */
  finish(): void {
    clearTimeout(this.timer);
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Ends the wait no later than `graceMs` after the shutdown began (0: now). */
  shorten(graceMs: number): void {
    const deadline = this.startedAt + Math.max(0, graceMs);
    if (deadline >= this.deadline) return;
    this.deadline = deadline;
    this.arm();
  }

  private arm(): void {
    clearTimeout(this.timer);
    const remaining = this.deadline - Date.now();
    if (remaining <= 0) {
      this.controller.abort(new Error('The shutdown grace is over.'));
      return;
    }
    this.timer = setTimeout(() => this.controller.abort(new Error('The shutdown grace is over.')), remaining);
  }
}
