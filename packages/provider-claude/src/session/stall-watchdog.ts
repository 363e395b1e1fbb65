/**
 * Notices a CLI that waits on the model API with nothing to show for a long time (the CLI sends no
 * keep-alive). Every frame re-arms it; when it fires while the run is only waiting on the API (not
 * in a tool, not waiting for the host) it reports a stall, otherwise it re-arms. A frame only notes
 * its time (a turn streams thousands); the timer, when it fires early, waits out the rest.
 */
export class StallWatchdog {
  private readonly timeoutMs: number;
  private readonly waitingOnApi: () => boolean;
  private readonly onStall: () => void;
  private timer: NodeJS.Timeout | null = null;
  private touchedAt = 0;

  constructor(options: { timeoutMs: number; waitingOnApi: () => boolean; onStall: () => void }) {
    this.timeoutMs = options.timeoutMs;
    this.waitingOnApi = options.waitingOnApi;
    this.onStall = options.onStall;
  }

  /** Something happened (at `at`, from Date.now()): the quiet period starts again. */
  touch(at = Date.now()): void {
    this.touchedAt = at;
    if (!this.timer) this.arm(this.timeoutMs);
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private arm(delayMs: number): void {
    this.timer = setTimeout(() => this.fire(), delayMs);
    this.timer.unref();
  }

  private fire(): void {
    this.timer = null;
    const quietMs = Date.now() - this.touchedAt;
    if (quietMs < this.timeoutMs) this.arm(this.timeoutMs - quietMs);
    else if (this.waitingOnApi()) this.onStall();
    else this.touch();
  }
}
