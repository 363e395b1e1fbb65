/**
 * When a stop really happens, seen from outside the code under measurement (the kernel's view of
 * the process, the signals this process sends), so a close or a crash can be split into its parts.
 */
import { performance } from 'node:perf_hooks';
import { processFinished } from './proc.mjs';

/**
 * When a process has finished (a zombie with no thread left, or gone), polled every ~1 ms from now
 * on: the kernel-side moment, to split a close into "the CLI takes this long to exit" and "the
 * host notices and finishes this much later". Used the same way on both legs. It misses the
 * moment (NaN) when the host handles the exit before the event loop reaches a timer again.
 */
export function watchDeath(pid) {
  const started = performance.now();
  let diedAt = NaN;
  let timer;
  const check = () => {
    if (processFinished(pid)) {
      diedAt = performance.now();
      return;
    }
    if (performance.now() - started < 30_000) timer = setTimeout(check, 1);
  };
  check();
  return {
    /** ms from `from` to the death; NaN if not seen. */
    diedMs(from) {
      clearTimeout(timer);
      return diedAt - from;
    },
  };
}

/**
 * Resolves once the process has finished (polled every ~2 ms), or after `timeoutMs` whatever it does:
 * a leg that ends a session without waiting for its process (Tether's closeSession resolves before
 * the CLI has exited) waits here, as the raw loop and the SDK wait for theirs, before its next clock.
 */
export async function processEnded(pid, timeoutMs = 10_000) {
  const started = performance.now();
  while (pid !== undefined && !processFinished(pid) && performance.now() - started < timeoutMs) {
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

/**
 * Signals this process sends (process.kill wrapped for the duration of a scenario): when Tether's
 * stop path actually signals the CLI, relative to the close request. Bench-side only.
 */
export function recordSignals() {
  const sent = [];
  const original = process.kill;
  process.kill = function kill(pid, signal) {
    sent.push({ at: performance.now(), pid, signal: signal ?? 'SIGTERM' });
    return original.call(process, pid, signal);
  };
  return {
    sent,
    /** ms from `from` to the first `signal` sent to `pid` or its group; NaN if none. */
    firstMs(pid, signal, from) {
      const found = sent.find((entry) => entry.at >= from && Math.abs(entry.pid) === pid && entry.signal === signal);
      return found ? found.at - from : NaN;
    },
    restore() {
      process.kill = original;
    },
  };
}
