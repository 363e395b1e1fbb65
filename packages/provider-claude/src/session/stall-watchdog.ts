/**
 * Notices a CLI that waits on the model API with nothing to show for a long time (the CLI sends no
 * keep-alive). Every frame re-arms it; when it fires while the run is only waiting on the API (not
 * in a tool, not waiting for the host) it reports a stall, otherwise it re-arms.
 */
export class StallWatchdog {
  private readonly timeoutMs: number;
  private readonly waitingOnApi: () => boolean;
  private readonly onStall: () => void;
  private timer: NodeJS.Timeout | null = null;

  constructor(options: { timeoutMs: number; waitingOnApi: () => boolean; onStall: () => void }) {
    this.timeoutMs = options.timeoutMs;
    this.waitingOnApi = options.waitingOnApi;
    this.onStall = options.onStall;
  }

  /** Something happened: the quiet period starts again. */
  touch(): void {
    if (this.timer) {
      this.timer.refresh();
      return;
    }
    this.timer = setTimeout(() => this.fire(), this.timeoutMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private fire(): void {
    this.timer = null;
    if (this.waitingOnApi()) this.onStall();
    else this.touch();
  }
}
