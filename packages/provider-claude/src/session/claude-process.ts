import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { encodeLine } from '../codec/encode-line.js';
import { type DecodedLine, LineDecoder } from '../codec/line-decoder.js';

export type ProcessExit =
  | { readonly kind: 'spawn_failed'; readonly errorCode: string | undefined }
  | { readonly kind: 'exited'; readonly exitCode: number | null; readonly signal: string | null; readonly stderrTail: string };

export interface ClaudeProcessOptions {
  readonly binaryPath: string;
  readonly argv: readonly string[];
  readonly environment: Record<string, string>;
  readonly cwd: string;
  readonly onLine: (line: DecodedLine) => void;
  readonly onExit: (exit: ProcessExit) => void;
}

const stderrTailLimit = 8 * 1024;
const gracefulExitMs = 2_000;
const terminateGraceMs = 3_000;

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

/**
 * One claude child: its own process group, NDJSON on stdout, a bounded stderr tail kept only
 * for classification, and a stop that escalates EOF → SIGTERM → SIGKILL.
 */
export class ClaudeProcess {
  readonly exited: Promise<void>;
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly decoder = new LineDecoder();
  private stderrTail = '';
  private hasExited = false;

  constructor(options: ClaudeProcessOptions) {
    let markExited!: () => void;
    this.exited = new Promise((resolve) => {
      markExited = resolve;
    });
    const finish = (exit: ProcessExit) => {
      if (this.hasExited) return;
      this.hasExited = true;
      options.onExit(exit);
      markExited();
    };
    this.child = spawn(options.binaryPath, options.argv, {
      cwd: options.cwd,
      env: options.environment,
      stdio: ['pipe', 'pipe', 'pipe'],
      // Its own process group, so a stop reaches the CLI and whatever it started in that group.
      detached: process.platform !== 'win32',
      windowsHide: true,
    });
    this.child.stdin.on('error', () => {
      // EPIPE after the child died: the exit handler reports what happened to the turn.
    });
    this.child.stdout.on('data', (chunk: Buffer) => this.decoder.push(chunk, options.onLine));
    this.child.stdout.on('end', () => this.decoder.end(options.onLine));
    this.child.stderr.on('data', (chunk: Buffer) => {
      this.stderrTail = (this.stderrTail + chunk.toString('utf8')).slice(-stderrTailLimit);
    });
    this.child.on('error', (error: NodeJS.ErrnoException) => {
      if (this.child.pid === undefined) finish({ kind: 'spawn_failed', errorCode: error.code });
    });
    // 'close' comes after stdout has ended, so every line is handled before the exit.
    this.child.on('close', (exitCode, signal) => {
      if (this.child.pid === undefined) return;
      finish({ kind: 'exited', exitCode, signal, stderrTail: this.stderrTail });
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get running(): boolean {
    return !this.hasExited;
  }

  /** Writes one JSON line; false when the child no longer accepts input. */
  write(message: object): boolean {
    if (this.hasExited || this.child.stdin.destroyed || this.child.stdin.writableEnded) return false;
    this.child.stdin.write(encodeLine(message));
    return true;
  }

  private signalGroup(signal: NodeJS.Signals): void {
    const pid = this.child.pid;
    if (pid === undefined || this.hasExited) return;
    try {
      process.kill(process.platform === 'win32' ? pid : -pid, signal);
    } catch {
      try {
        this.child.kill(signal);
      } catch {
        // Already gone.
      }
    }
  }

  /**
   * Ends the process: EOF first (an idle CLI exits within ~100 ms), SIGTERM when it is busy or
   * does not exit in time, SIGKILL as the last resort.
   */
  async stop(options: { busy: boolean }): Promise<void> {
    if (this.hasExited) return;
    this.child.stdin.end();
    if (!options.busy) {
      await Promise.race([this.exited, delay(gracefulExitMs)]);
      if (this.hasExited) return;
    }
    this.signalGroup('SIGTERM');
    await Promise.race([this.exited, delay(terminateGraceMs)]);
    if (this.hasExited) return;
    this.signalGroup('SIGKILL');
    await this.exited;
  }
}
