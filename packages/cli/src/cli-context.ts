import type { Writable } from 'node:stream';
import { type ShutdownSignal, shutdownSignals, signalExitCode } from '@tether/runtime';
import type { Output } from './render/human-renderer.js';

/** Everything a command touches outside itself, so tests can drive commands in-process too. */
export interface CliContext {
  readonly stdout: Output;
  readonly stderr: Output;
  readonly environment: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  /** Where --answers - reads from. */
  readonly stdin: NodeJS.ReadableStream;
  /** stdout is a terminal: what is written there is read by a person, not kept in a file or piped on. */
  readonly stdoutIsTerminal: boolean;
  /** Present when a person can be asked: stdin and stderr are a terminal. */
  readonly terminal: { readonly input: NodeJS.ReadStream; readonly output: NodeJS.WriteStream } | undefined;
  /**
   * Calls the listener when the user or the system asks to stop: Ctrl-C (SIGINT), a supervisor
   * (SIGTERM), a closed terminal (SIGHUP), Ctrl-\\ (SIGQUIT). The count says how many signals so far. Nobody reading
   * stdout or stderr any more (EPIPE) counts as SIGHUP, unless an onOutputClosed listener takes it.
   */
  readonly onInterrupt: (listener: (count: number, signal: ShutdownSignal) => void) => () => void;
  /** The last resort after a signal: exit with `code` if the process is still running `ms` from now. */
  readonly exitAfter: (ms: number, code: number) => void;
  /**
   * For a command that ends its own way when nobody reads stdout or stderr any more (EPIPE: the
   * reading process died): the listener is called instead of the onInterrupt ones. What is written
   * after that is dropped either way. Returns the remover.
   */
  readonly onOutputClosed?: (listener: () => void) => () => void;
}

/**
 * stdout and stderr, watched once for the whole process. Node reports a write to a pipe whose reader
 * has gone only later, as an 'error' event on the stream (whether the write itself was sync or
 * async), and with no listener that event kills the process and leaves its agents running: so it
 * is always listened to here, what is written after it is dropped, and the closure goes to whoever
 * is driving something. A command that only prints has no such listener: it stops printing.
 */
export interface WatchedOutput {
  readonly stdout: Output;
  readonly stderr: Output;
  /** A command's own ending for a closed output (tether acp: as when the editor quits). */
  onClosed(listener: () => void): () => void;
  /** The generic ending: a closed output as SIGHUP, its reader went away as a terminal does. */
  onClosedAsStop(listener: () => void): () => void;
}

let watched: WatchedOutput | undefined;

/** How long a signal that came after a command stopped listening lets the process finish. */
const lateSignalMs = 3_000;
/** Command listeners installed now (onInterrupt), and whether a last-resort handler is in place. */
const interruptListeners = { active: 0, lastResort: false };

/**
 * Once a command has listened for signals it is driving something (a run, agents, a store): a
 * signal between its listener's removal and the process's end (its closing steps) must not kill the
 * process by Node's default, cutting those steps off. It ends the process with the signal's code
 * once they are done, or after lateSignalMs at the latest.
 */
function installLastResort(): void {
  if (interruptListeners.lastResort) return;
  interruptListeners.lastResort = true;
  for (const signal of shutdownSignals()) {
    process.on(signal, () => {
      if (interruptListeners.active > 0) return;
      const code = signalExitCode(signal);
      process.on('exit', () => {
        process.exitCode = code;
      });
      setTimeout(() => process.exit(code), lateSignalMs).unref();
    });
  }
}

/** The process's stdout and stderr in production; a test's own streams otherwise. */
export function watchOutput(streams: { readonly stdout: Writable; readonly stderr: Writable }): WatchedOutput {
  let closed: keyof typeof streams | null = null;
  // Handed to a listener: one closure is one ending, however many listeners come later.
  let handled = false;
  const own = new Set<() => void>();
  const asStop = new Set<() => void>();
  const write = (name: keyof typeof streams, text: string) => {
    const stream = streams[name];
    if (!stream.destroyed && stream.writable) stream.write(text);
  };
  const deliver = () => {
    if (closed === null || handled) return;
    const listeners = own.size > 0 ? [...own] : [...asStop];
    // Nothing listens yet: the first command that does gets it when it starts listening.
    if (listeners.length === 0) return;
    handled = true;
    if (own.size === 0) write('stderr', `■ ${closed} closed (nobody reads it any more): ending as on SIGHUP\n`);
    for (const listener of listeners) listener();
  };
  for (const name of ['stdout', 'stderr'] as const) {
    // Any write error leaves the stream destroyed: whatever the code, there is nowhere left to write.
    streams[name].on('error', () => {
      if (closed !== null) return;
      closed = name;
      deliver();
    });
  }
  const subscribe = (listeners: Set<() => void>, listener: () => void) => {
    listeners.add(listener);
    // After the caller has its remover, as a signal would come.
    if (closed !== null && !handled) queueMicrotask(deliver);
    return () => void listeners.delete(listener);
  };
  return {
    stdout: { write: (text) => write('stdout', text) },
    stderr: { write: (text) => write('stderr', text) },
    onClosed: (listener) => subscribe(own, listener),
    onClosedAsStop: (listener) => subscribe(asStop, listener),
  };
}

export function processContext(): CliContext {
  watched ??= watchOutput({ stdout: process.stdout, stderr: process.stderr });
  const output = watched;
  return {
    stdout: output.stdout,
    stderr: output.stderr,
    environment: process.env,
    cwd: process.cwd(),
    stdin: process.stdin,
    stdoutIsTerminal: process.stdout.isTTY === true,
    terminal:
      process.stdin.isTTY && process.stderr.isTTY ? { input: process.stdin, output: process.stderr } : undefined,
    onInterrupt(listener) {
      installLastResort();
      interruptListeners.active += 1;
      let count = 0;
      const stop = (signal: ShutdownSignal) => {
        count += 1;
        listener(count, signal);
      };
      const handlers = shutdownSignals().map((signal) => {
        const handler = () => stop(signal);
        process.on(signal, handler);
        return { signal, handler };
      });
      // Once stopping for a signal, a closed output is part of the same ending (a closed terminal
      // sends SIGHUP and then fails the writes), not a second signal that would skip the grace.
      const removeOutputWatch = output.onClosedAsStop(() => {
        if (count === 0) stop('SIGHUP');
      });
      let removed = false;
      return () => {
        if (removed) return;
        removed = true;
        interruptListeners.active -= 1;
        for (const { signal, handler } of handlers) process.off(signal, handler);
        removeOutputWatch();
      };
    },
    onOutputClosed: (listener) => output.onClosed(listener),
    exitAfter(ms, code) {
      // Unreferenced: it never keeps a process that is done anyway alive.
      setTimeout(() => process.exit(code), ms).unref();
    },
  };
}
