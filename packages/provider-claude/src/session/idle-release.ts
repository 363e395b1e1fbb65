/**
 * The timer behind idle release: fires once after `delayMs` of quiet (0 = never), and the owner
 * decides then whether the agent may go (a process with background tasks keeps running).
 */
export class IdleRelease {
  private readonly delayMs: number;
  private readonly onIdle: () => void;
  private timer: NodeJS.Timeout | null = null;

  constructor(options: { delayMs: number; onIdle: () => void }) {
    this.delayMs = options.delayMs;
    this.onIdle = options.onIdle;
  }

  schedule(): void {
    this.cancel();
    if (this.delayMs <= 0) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.onIdle();
    }, this.delayMs);
    this.timer.unref();
  }

  cancel(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
