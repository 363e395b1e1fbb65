import { constants } from 'node:os';
import type { ShutdownOptions } from './shutdown-grace.js';

/**
 * The signals a host is asked to stop by: Ctrl-C, a supervisor (systemd, timeout, kill), a closed
 * terminal, Ctrl-\ (SIGQUIT), and the others whose default action ends a process and which tools
 * send to ask for an end (nodemon's SIGUSR2, an alarm, a CPU limit, a power failure): each left to
 * Node's default would end the host at once, its runs open and its agents working on unwatched until
 * the next start cleaned up. Not SIGPROF (V8's profiler samples with it) nor SIGUSR1 (Node's inspector).
 */
export type ShutdownSignal =
  | 'SIGINT'
  | 'SIGTERM'
  | 'SIGHUP'
  | 'SIGQUIT'
  | 'SIGUSR2'
  | 'SIGALRM'
  | 'SIGVTALRM'
  | 'SIGXCPU'
  | 'SIGPWR';

const allShutdownSignals: readonly ShutdownSignal[] = [
  'SIGINT',
  'SIGTERM',
  'SIGHUP',
  'SIGQUIT',
  'SIGUSR2',
  'SIGALRM',
  'SIGVTALRM',
  'SIGXCPU',
  'SIGPWR',
];

/** Whether Node itself answers `signal` in this process: a diagnostic report or a heap snapshot is asked for, not an end. */
function diagnosticSignal(signal: ShutdownSignal): boolean {
  if (process.report?.reportOnSignal === true && process.report.signal === signal) return true;
  const options = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)];
  return options.includes(`--heapsnapshot-signal=${signal}`);
}

/** The shutdown signals this platform has (SIGPWR is Linux's), less one Node answers itself here (--report-on-signal). */
export function shutdownSignals(): readonly ShutdownSignal[] {
  return allShutdownSignals.filter((signal) => constants.signals[signal] !== undefined && !diagnosticSignal(signal));
}

/** The exit code a process stopped by `signal` reports by convention: 128 + the signal's number (130, 143, 129, 131…). */
export function signalExitCode(signal: ShutdownSignal): number {
  return 128 + (constants.signals[signal] ?? constants.signals.SIGTERM);
}

export interface ShutdownSignalOptions {
  /** How long active runs get to end on their own after the first signal (default 1000 ms). */
  readonly graceMs?: number;
  /** Which signals to handle (default: every one of shutdownSignals()). */
  readonly signals?: readonly ShutdownSignal[];
  /** Called once the runtime has shut down; the default exits the process with the signal's code. */
  readonly onShutdown?: (exitCode: number, signal: ShutdownSignal) => void;
}

/**
 * Installs handlers that shut the runtime down on a signal, bounded: the first signal asks active
 * runs to stop, gives them `graceMs`, records the rest as interrupted, kills the agent processes
 * and closes the store, then exits with the signal's code; a second signal skips what is left of
 * the grace. Returns a disposer that removes the handlers.
 */
export function handleShutdownSignals(
  runtime: { shutdown(options?: ShutdownOptions): Promise<void> },
  options: ShutdownSignalOptions = {},
): () => void {
  const graceMs = options.graceMs ?? 1_000;
  const onShutdown = options.onShutdown ?? ((exitCode: number) => process.exit(exitCode));
  let first: ShutdownSignal | null = null;
  const handlers = (options.signals ?? shutdownSignals()).map((signal) => {
    const handler = () => {
      if (first !== null) {
        void runtime.shutdown({ graceMs: 0, force: true });
        return;
      }
      first = signal;
      void runtime.shutdown({ graceMs, force: true }).finally(() => onShutdown(signalExitCode(signal), signal));
    };
    process.on(signal, handler);
    return [signal, handler] as const;
  });
  return () => {
    for (const [signal, handler] of handlers) process.off(signal, handler);
  };
}
