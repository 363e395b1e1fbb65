/**
 * A timer that fires once, `delayMs` after it was last scheduled (0 = never); the owner decides
 * then what it means. Behind idle release and the start-up watchdog.
 */
export class OneShotTimer {
  private readonly delayMs: number;
  private readonly onFire: () => void;
  private timer: NodeJS.Timeout | null = null;

  constructor(options: { delayMs: number; onFire: () => void }) {
    this.delayMs = options.delayMs;
    this.onFire = options.onFire;
  }

  /** (Re)starts the wait. */
  schedule(): void {
    this.cancel();
    if (this.delayMs <= 0) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.onFire();
    }, this.delayMs);
    this.timer.unref();
  }

  cancel(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
