import type { Output } from './human-renderer.js';

const frames = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/**
 * A one-line spinner on a terminal's stderr with the run's state and elapsed time, shown only while
 * nothing else is being printed and the cursor is at the start of a line. Never used for --json or
 * when stderr is not a terminal.
 */
export class ProgressSpinner {
  private readonly output: Output;
  private readonly startedAt = Date.now();
  private readonly timer: NodeJS.Timeout;
  private state = 'starting';
  private frame = 0;
  private shown = false;
  private quietSince = Date.now();
  private atLineStart = true;
  private paused = false;

  constructor(output: Output) {
    this.output = output;
    this.timer = setInterval(() => this.tick(), 100);
    this.timer.unref();
  }

  setState(state: string): void {
    this.state = state;
  }

  /** Someone else owns the terminal for a while (a prompt is being asked). */
  pause(): void {
    this.clear();
    this.paused = true;
  }

  resume(): void {
    this.paused = false;
    this.quietSince = Date.now();
    this.atLineStart = true;
  }

  /** Something is about to be printed: clear the spinner line first. */
  beforeOutput(atLineStartAfter: boolean): void {
    this.clear();
    this.quietSince = Date.now();
    this.atLineStart = atLineStartAfter;
  }

  stop(): void {
    clearInterval(this.timer);
    this.clear();
  }

  private clear(): void {
    if (!this.shown) return;
    this.output.write('\r\u001b[2K');
    this.shown = false;
  }

  private tick(): void {
    // Only after a quiet moment, and never in the middle of the answer's line.
    if (this.paused || !this.atLineStart || Date.now() - this.quietSince < 500) return;
    this.frame = (this.frame + 1) % frames.length;
    const seconds = ((Date.now() - this.startedAt) / 1000).toFixed(0);
    this.output.write(`\r\u001b[2K${frames[this.frame]} ${this.state} · ${seconds} s`);
    this.shown = true;
  }
}
