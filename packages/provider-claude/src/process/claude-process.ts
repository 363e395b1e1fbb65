import { type ChildProcessByStdio, spawn } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { encodeLine } from '../codec/encode-line.js';
import { type DecodedLine, LineDecoder } from '../codec/line-decoder.js';
import type { AgentPriority } from './agent-priority.js';
import { readProcessStatus } from './proc-filesystem.js';
import { forgetLiveAgent, recordLiveAgent } from './live-agent-markers.js';
import { createProcessMarker, processMarkerVariable } from './process-marker.js';
import { type ProcessIdentity, snapshotDescendants, snapshotDescendantsInSlices } from './find-processes.js';
import type { StdoutChannel } from './stdout-channel.js';
import { type SweepResult, sweepDescendants } from './sweep-descendants.js';

export type ProcessExit =
  | { readonly kind: 'spawn_failed'; readonly errorCode: string | undefined }
  | {
      readonly kind: 'exited';
      readonly exitCode: number | null;
      readonly signal: string | null;
      readonly stderrTail: string;
    };

export interface ClaudeProcessOptions {
  readonly binaryPath: string;
  readonly argv: readonly string[];
  readonly environment: Record<string, string>;
  readonly cwd: string;
  /** How the child's (and what it starts) priority follows the host's other agents: see agent-priority.ts. Default: as the host. */
  readonly priority?: AgentPriority;
  /** Receives stdout line by line; without it stdout is left for handedOver()'s reader (the Agent SDK). */
  readonly onLine?: (line: DecodedLine) => void;
  /** Takes a stdout line as text before it is parsed (true: taken; see LineDecoder). */
  readonly takeLine?: (text: string) => boolean;
  /** Called once the lines of one stdout read (or its end) were all given to onLine. */
  readonly afterRead?: () => void;
  /**
   * The child's stdout as a channel of ours, read paced (see stdout-channel.ts); only with onLine.
   * Without it (or without onLine) stdout is a pipe.
   */
  readonly stdoutChannel?: StdoutChannel;
  /** With a channel: whether the lines read last are a stream whose next read may wait (default: yes). */
  readonly streaming?: () => boolean;
  readonly onExit: (exit: ProcessExit) => void;
}

type ExitListener = (code: number | null, signal: NodeJS.Signals | null) => void;
type ErrorListener = (error: Error) => void;

/** The child as a transport that reads stdout itself sees it (the shape of the Agent SDK's SpawnedProcess). */
export interface HandedOverProcess {
  readonly stdin: Writable;
  readonly stdout: Readable;
  readonly killed: boolean;
  readonly exitCode: number | null;
  readonly signalCode: NodeJS.Signals | null;
  /** Signals the child's whole process group, as every stop of ours does. */
  kill(signal: NodeJS.Signals): boolean;
  on(event: 'exit', listener: ExitListener): void;
  on(event: 'error', listener: ErrorListener): void;
  once(event: 'exit', listener: ExitListener): void;
  once(event: 'error', listener: ErrorListener): void;
  off(event: 'exit', listener: ExitListener): void;
  off(event: 'error', listener: ErrorListener): void;
}

const stderrTailLimit = 8 * 1024;
const gracefulExitMs = 2_000;
const terminateGraceMs = 3_000;
/** After the child exited and its descendants were swept, how long stdout/stderr may stay open. */
const streamCloseGraceMs = 1_000;

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

/**
 * One claude child: its own process group, NDJSON on stdout, a bounded stderr tail kept only
 * for classification, and a stop that escalates EOF → SIGTERM → SIGKILL.
 *
 * Supervision: the child's environment carries a fresh TETHER_PROCESS_MARKER, which every
 * descendant inherits (also those that detach into their own session, as the CLI's Bash tool
 * commands do). Whenever the child exits (stop, on its own, or killed from outside) the marked
 * processes it left are swept (see process/sweep-descendants.ts); `swept` settles after that.
 */
export class ClaudeProcess {
  readonly exited: Promise<void>;
  /** Settles once the child has exited and what it left behind was swept (bounded in time). */
  readonly swept: Promise<SweepResult>;
  /** The TETHER_PROCESS_MARKER value in this child's (and its descendants') environment. */
  readonly marker: string;
  /** The child's process group (its pid: it is spawned detached); undefined on Windows or if the spawn failed. */
  readonly processGroup: number | undefined;
  /** Start time from /proc (clock ticks after boot), to tell this child from a later one with its pid; undefined off Linux. */
  readonly startTime: number | undefined;
  /** stdout is null when it is a channel of ours. */
  private readonly child: ChildProcessByStdio<Writable, Readable | null, Readable>;
  private readonly stdoutChannel: StdoutChannel | undefined;
  private readonly decoder: LineDecoder;
  private stderrTail = '';
  private hasExited = false;
  /** The OS process is gone ('exit'), though its streams may still be open. */
  private childGone = false;
  /** Descendants seen by parent-pid walk during stop, before any signal could orphan them. */
  private readonly knownDescendants = new Map<number, ProcessIdentity>();
  /** A forced stop: neither the child nor what it left gets a grace period. */
  private forced = false;

  constructor(options: ClaudeProcessOptions) {
    let markExited!: () => void;
    this.exited = new Promise((resolve) => {
      markExited = resolve;
    });
    let markSwept!: (result: SweepResult) => void;
    this.swept = new Promise((resolve) => {
      markSwept = resolve;
    });
    this.marker = createProcessMarker();
    this.decoder = new LineDecoder({ takeLine: options.takeLine });
    const finish = (exit: ProcessExit) => {
      if (this.hasExited) return;
      this.hasExited = true;
      options.onExit(exit);
      markExited();
    };
    let sweepStarted = false;
    const sweep = () => {
      if (sweepStarted) return;
      sweepStarted = true;
      sweepDescendants({
        marker: this.marker,
        knownDescendants: [...this.knownDescendants.values()],
        ...(this.forced ? { graceMs: 0 } : {}),
      })
        .catch((): SweepResult => ({ supported: false, signalled: [], survivors: [] }))
        .then((result) => {
          // A survivor stays recorded: a host killed later, and the next host's start, still find it.
          if (result.survivors.length === 0) forgetLiveAgent(this.marker);
          markSwept(result);
          this.closeStreamsLater(options);
        });
    };
    // A channel only for output read here: a transport that reads stdout itself gets a pipe.
    const channel = options.onLine ? options.stdoutChannel : undefined;
    if (!channel) options.stdoutChannel?.close();
    this.stdoutChannel = channel;
    // On disk before the process exists: a host killed at any moment from here on leaves the marker to the next host.
    recordLiveAgent(this.marker);
    try {
      this.child = spawn(options.binaryPath, options.argv, {
        cwd: options.cwd,
        env: { ...options.environment, [processMarkerVariable]: this.marker },
        stdio: ['pipe', channel ? channel.childEnd : 'pipe', 'pipe'],
        // Its own process group, so a stop reaches the CLI and whatever it started in that group.
        detached: process.platform !== 'win32',
        windowsHide: true,
      }) as ChildProcessByStdio<Writable, Readable | null, Readable>;
    } catch (error) {
      channel?.close();
      forgetLiveAgent(this.marker);
      throw error;
    }
    this.child.stdin.on('error', () => {
      // EPIPE after the child died: the exit handler reports what happened to the turn.
    });
    // The exit is reported once every line was handled: 'close' waits for a pipe's end, not a channel's.
    let stdoutOpen = channel !== undefined;
    let closedWith: ProcessExit | null = null;
    const finishOnceRead = () => {
      if (closedWith && !stdoutOpen) finish(closedWith);
    };
    if (channel) {
      channel.start({
        onData: (chunk) => this.readLines(options, chunk),
        streaming: options.streaming ?? (() => true),
        onEnd: () => {
          this.readLines(options, null);
          stdoutOpen = false;
          finishOnceRead();
        },
      });
    } else if (options.onLine) {
      this.child.stdout?.on('data', (chunk: Buffer) => this.readLines(options, chunk));
      this.child.stdout?.on('end', () => this.readLines(options, null));
    }
    // Decoded as a stream: a character split across two reads stays one character in the tail an error quotes.
    this.child.stderr.setEncoding('utf8');
    this.child.stderr.on('data', (chunk: string) => {
      this.stderrTail = (this.stderrTail + chunk).slice(-stderrTailLimit);
    });
    this.child.on('error', (error: NodeJS.ErrnoException) => {
      if (this.child.pid !== undefined) return;
      finish({ kind: 'spawn_failed', errorCode: error.code });
      forgetLiveAgent(this.marker);
      markSwept({ supported: true, signalled: [], survivors: [] });
    });
    // 'exit' is the earliest moment the child is gone: sweep what it left, before anything else
    // can reuse its pids. A child killed from outside leaves its tool commands running otherwise.
    this.child.on('exit', () => {
      this.childGone = true;
      sweep();
    });
    // 'close' comes after a pipe's stdout has ended (a channel's end is awaited above).
    this.child.on('close', (exitCode, signal) => {
      if (this.child.pid === undefined) return;
      closedWith = { kind: 'exited', exitCode, signal, stderrTail: this.stderrTail };
      finishOnceRead();
    });
    const pid = this.child.pid;
    // spawn() returns after exec, so the group (setsid) and the start time are final here.
    if (pid !== undefined && options.priority) this.child.once('exit', options.priority.started(pid));
    const status = pid === undefined ? undefined : readProcessStatus(pid);
    this.startTime = status?.startTime;
    this.processGroup = status?.processGroup ?? (pid !== undefined && process.platform !== 'win32' ? pid : undefined);
  }

  /** A read's lines (null: the stream's end, and a last line without a newline). */
  private readLines(options: ClaudeProcessOptions, chunk: Buffer | null): void {
    const onLine = options.onLine;
    if (!onLine) return;
    if (chunk) this.decoder.push(chunk, onLine);
    else this.decoder.end(onLine);
    options.afterRead?.();
  }

  /**
   * 'close' waits for stdout and stderr to close, which a process that inherited them (and
   * escaped the sweep by dropping the marker) could keep open forever: after the sweep and a
   * short grace, stop reading so the exit is still reported.
   */
  private closeStreamsLater(options: ClaudeProcessOptions): void {
    if (this.hasExited) return;
    setTimeout(() => {
      if (this.hasExited) return;
      if (this.stdoutChannel) this.stdoutChannel.close();
      else if (this.child.stdout && !this.child.stdout.readableEnded) this.readLines(options, null);
      this.child.stdout?.destroy();
      this.child.stderr.destroy();
    }, streamCloseGraceMs).unref();
  }

  /**
   * Records the child's current descendants, to sweep them by identity even after they are
   * reparented. A walk of the whole host's /proc that holds the event loop (up to ~250 ms on a
   * loaded machine): only where the signal that follows must not wait for a sliced walk.
   */
  private rememberDescendants(): void {
    const pid = this.child.pid;
    if (pid === undefined || this.childGone) return;
    for (const identity of snapshotDescendants(pid)) this.knownDescendants.set(identity.pid, identity);
  }

  /** rememberDescendants with the event loop running during the walk, for a stop that can wait for it. */
  private async rememberDescendantsInSlices(): Promise<void> {
    const pid = this.child.pid;
    if (pid === undefined || this.childGone) return;
    const found = await snapshotDescendantsInSlices(pid);
    // A sweep that started meanwhile (the child exited) has taken the list already; the marker still finds these.
    for (const identity of found) this.knownDescendants.set(identity.pid, identity);
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get running(): boolean {
    return !this.hasExited;
  }

  /**
   * The child's stdio and events for a transport that reads stdout itself (the Agent SDK's
   * spawnClaudeCodeProcess), stdout through `reader` and stdin through `writer` if given. Supervision stays here: its kill()
   * signals the process group, and the exit is still swept and reported through onExit.
   */
  handedOver(
    reader: (stdout: Readable) => Readable = (stdout) => stdout,
    writer: (stdin: Writable) => Writable = (stdin) => stdin,
  ): HandedOverProcess {
    const child = this.child;
    // Only a process started without onLine is handed over, and its stdout is always a pipe.
    if (!child.stdout) throw new Error('This process reads its stdout itself; it cannot be handed over.');
    const stdout = child.stdout;
    const signal = (name: NodeJS.Signals) => {
      this.signalGroup(name);
      return true;
    };
    // The Agent SDK adds an 'exit' listener per waitForExit() (a prewarmed spare's claim makes it 11
    // with ours): a fixed number, not a leak, so Node's warning at 10 would only alarm an operator.
    child.setMaxListeners(Math.max(child.getMaxListeners(), 32));
    return {
      stdin: writer(child.stdin),
      stdout: reader(stdout),
      get killed() {
        return child.killed;
      },
      get exitCode() {
        return child.exitCode;
      },
      get signalCode() {
        return child.signalCode;
      },
      kill: signal,
      on: (event: 'exit' | 'error', listener: ExitListener & ErrorListener) => void child.on(event, listener),
      once: (event: 'exit' | 'error', listener: ExitListener & ErrorListener) => void child.once(event, listener),
      off: (event: 'exit' | 'error', listener: ExitListener & ErrorListener) => void child.off(event, listener),
    };
  }

  /**
   * Writes one JSON line; false when the child no longer accepts input. `onWritten` learns whether
   * the line reached the pipe: a child that closed its stdin fails the write (EPIPE) only afterwards.
   */
  write(message: object, onWritten?: (error: Error | null | undefined) => void): boolean {
    if (this.hasExited || this.child.stdin.destroyed || this.child.stdin.writableEnded) return false;
    this.stdoutChannel?.expectAnswer();
    this.child.stdin.write(encodeLine(message), onWritten);
    return true;
  }

  private signalGroup(signal: NodeJS.Signals): void {
    const pid = this.child.pid;
    // Once the child is reaped its pid (and so its group id) may be reused; the sweep takes over.
    if (pid === undefined || this.hasExited || this.childGone) return;
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
   * does not exit in time, SIGKILL as the last resort; then waits for the sweep of whatever it
   * left running (bounded), on every one of these paths. `force` (a host that must exit now, e.g.
   * on SIGTERM) skips the graces: SIGKILL to the group at once, and the sweep kills without waiting.
   */
  async stop(options: { busy: boolean; force?: boolean }): Promise<void> {
    if (options.force) {
      this.kill();
      await this.exited;
    } else await this.end(options);
    await this.swept;
  }

  /** SIGKILL to the whole group now; the sweep that follows the exit gives what it left no grace either. */
  private kill(): void {
    if (this.hasExited || this.childGone) return;
    this.forced = true;
    // Synchronous: a host that must exit now does not wait for a sliced walk, and the SIGKILL must follow it at once.
    this.rememberDescendants();
    this.signalGroup('SIGKILL');
  }

  private async end(options: { busy: boolean }): Promise<void> {
    if (this.hasExited) return;
    if (options.busy) {
      this.child.stdin.end();
      // Synchronous, right before the signal: a busy stop cuts a turn someone waits on, and a sliced
      // walk would hold the SIGTERM back for as long as the walk takes on a loaded host.
      this.rememberDescendants();
      this.signalGroup('SIGTERM');
    } else {
      // Before the EOF, in slices: an idle CLI's tree holds still until the EOF, and none of its
      // children can yet have been reparented by its exit. The daemon's event loop runs meanwhile.
      await this.rememberDescendantsInSlices();
      if (this.hasExited) return;
      this.child.stdin.end();
      await Promise.race([this.exited, delay(gracefulExitMs)]);
      if (this.hasExited) return;
      // It ignored the EOF for seconds already: look again (it may have started something on the EOF).
      await this.rememberDescendantsInSlices();
      this.signalGroup('SIGTERM');
    }
    await Promise.race([this.exited, delay(terminateGraceMs)]);
    if (this.hasExited) return;
    // Seconds after the SIGTERM nobody waits on this walk: in slices on both paths.
    await this.rememberDescendantsInSlices();
    this.signalGroup('SIGKILL');
    await this.exited;
  }
}
