import type { ShutdownSignal } from '@tether/runtime';
import type { Output } from './render/human-renderer.js';

/** Everything a command touches outside itself, so tests can drive commands in-process too. */
export interface CliContext {
  readonly stdout: Output;
  readonly stderr: Output;
  readonly environment: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  /** Where --answers - reads from. */
  readonly stdin: NodeJS.ReadableStream;
  /** Present when a person can be asked: stdin and stderr are a terminal. */
  readonly terminal: { readonly input: NodeJS.ReadStream; readonly output: NodeJS.WriteStream } | undefined;
  /**
   * Calls the listener when the user or the system asks to stop: Ctrl-C (SIGINT), a supervisor
   * (SIGTERM), a closed terminal (SIGHUP). The count says how many signals so far.
   */
  readonly onInterrupt: (listener: (count: number, signal: ShutdownSignal) => void) => () => void;
  /** The last resort after a signal: exit with `code` if the process is still running `ms` from now. */
  readonly exitAfter: (ms: number, code: number) => void;
  /**
   * Calls the listener when nobody reads stdout or stderr any more (EPIPE: the reading process
   * died), instead of the write error ending this process with its children still running; what is
   * written after that is dropped. Returns the remover.
   */
  readonly onOutputClosed?: (listener: () => void) => () => void;
}

const stopSignals: readonly ShutdownSignal[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

export function processContext(): CliContext {
  return {
    stdout: { write: (text) => void process.stdout.write(text) },
    stderr: { write: (text) => void process.stderr.write(text) },
    environment: process.env,
    cwd: process.cwd(),
    stdin: process.stdin,
    terminal:
      process.stdin.isTTY && process.stderr.isTTY ? { input: process.stdin, output: process.stderr } : undefined,
    onInterrupt(listener) {
      let count = 0;
      const handlers = stopSignals.map((signal) => {
        const handler = () => {
          count += 1;
          listener(count, signal);
        };
        process.on(signal, handler);
        return { signal, handler };
      });
      return () => {
        for (const { signal, handler } of handlers) process.off(signal, handler);
      };
    },
    onOutputClosed(listener) {
      const handler = (error: NodeJS.ErrnoException) => {
        if (error.code === 'EPIPE' || error.code === 'ERR_STREAM_DESTROYED') listener();
        else throw error;
      };
      for (const stream of [process.stdout, process.stderr]) stream.on('error', handler);
      return () => {
        for (const stream of [process.stdout, process.stderr]) stream.off('error', handler);
      };
    },
    exitAfter(ms, code) {
      // Unreferenced: it never keeps a process that is done anyway alive.
      setTimeout(() => process.exit(code), ms).unref();
    },
  };
}
