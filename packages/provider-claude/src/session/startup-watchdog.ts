/**
 * Notices an agent that was started and handed a turn but never writes its first frame (a wedged
 * binary, an MCP server that never answers, a login prompt): the API stall watchdog cannot, as it
 * only arms once the agent says it is calling the API. Armed when a turn is written to an agent that
 * has not spoken yet, disarmed by its first frame.
 */
export class StartupWatchdog {
  private readonly timeoutMs: number;
  private readonly onTimeout: () => void;
  private timer: NodeJS.Timeout | null = null;

  constructor(options: { timeoutMs: number; onTimeout: () => void }) {
    this.timeoutMs = options.timeoutMs;
    this.onTimeout = options.onTimeout;
  }

  arm(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.onTimeout();
    }, this.timeoutMs);
    this.timer.unref();
  }

  disarm(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
