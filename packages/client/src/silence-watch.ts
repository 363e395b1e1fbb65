/**
 * Notices a connection that sends nothing while the client waits on it: the time spent in `wait`
 * counts, the time the consumer takes between reads does not (a slow consumer is not a hung daemon).
 * One timer at a time, re-armed only when it fires, so a busy stream costs a clock read per chunk.
 */
export class SilenceWatch {
  readonly #limitMs: number;
  readonly #onSilence: () => void;
  #waitingSince: number | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #silent = false;

  /** `limitMs` Infinity never fires. */
  constructor(limitMs: number, onSilence: () => void) {
    this.#limitMs = limitMs;
    this.#onSilence = onSilence;
  }

  /** Whether the limit passed (and onSilence was called). */
  get silent(): boolean {
    return this.#silent;
  }

  /** Settles as `promise` does; the time it takes counts towards the limit. */
  async wait<T>(promise: Promise<T>): Promise<T> {
    this.#waitingSince = performance.now();
    this.#arm(this.#limitMs);
    try {
      return await promise;
    } finally {
      this.#waitingSince = undefined;
    }
  }

  stop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #arm(delayMs: number): void {
    // setTimeout fires at once past a 32-bit count of ms: such a limit is never reached.
    if (this.#timer !== undefined || this.#silent || delayMs > 2_147_483_647) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      // Not waiting now: the next wait arms the timer again.
      if (this.#waitingSince === undefined) return;
      const silentForMs = performance.now() - this.#waitingSince;
      if (silentForMs < this.#limitMs) return this.#arm(this.#limitMs - silentForMs);
      this.#silent = true;
      this.#onSilence();
    }, delayMs);
  }
}
