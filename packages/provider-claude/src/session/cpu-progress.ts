import { readProcessStatus } from '../process/proc-filesystem.js';

/** The CPU a process has used so far, in clock ticks; undefined when it cannot be read (no /proc, no such process). */
export type CpuTicksReader = (pid: number) => number | undefined;

/** The CPU a process has used, from /proc. */
export const readCpuTicks: CpuTicksReader = (pid) => readProcessStatus(pid)?.cpuTicks;

/**
 * Watches a spare for a sign of life while a session waits on it. A claude at work (starting up,
 * or answering a claim) uses CPU, slowly on a loaded machine but steadily; one that used none at
 * all between two looks `checkMs` apart (stopped, or blocked for good) is taken for hung, and
 * `onStalled` is called, once. Where `ticks()` cannot be read (no /proc, no pid yet) nothing is
 * concluded: the wait is then the caller's own bound. Returns the function that ends the watch.
 */
export function watchCpuProgress(options: {
  readonly checkMs: number;
  readonly ticks: () => number | undefined;
  readonly onStalled: () => void;
}): () => void {
  let lastTicks = options.ticks();
  const check = setInterval(() => {
    const ticks = options.ticks();
    const stalled = ticks !== undefined && ticks === lastTicks;
    lastTicks = ticks;
    if (!stalled) return;
    clearInterval(check);
    options.onStalled();
  }, options.checkMs);
  return () => clearInterval(check);
}
