import type { AgentRuntime } from '@tether/runtime';
import type { DaemonLogger } from '../logging/create-logger.js';

/**
 * The first half of a graceful shutdown: active runs get `graceMs` to finish (their run.completed
 * is awaited), or until `hurry` aborts (a second signal). From its start no queued follow-up starts
 * (a run that ends would otherwise hand its session to the next one): they stay queued, and the next
 * start cancels them `runtime_restarted` (docs/protocol.md, "Follow-ups"). What is still active then
 * the runtime's shutdown stops: an interrupt each, their end saying why (runtime_stopped).
 */
export async function drainRuns(
  runtime: AgentRuntime,
  graceMs: number,
  logger: DaemonLogger,
  hurry: AbortSignal,
): Promise<void> {
  runtime.beginShutdown();
  // This daemon's runs only: on a shared store the others' runs are their daemons' to drain.
  const running = runtime.activeRuns();
  if (running.length === 0) return;
  logger.info({ runs: running.length, graceMs }, 'waiting for active runs to finish');
  const grace = AbortSignal.any([AbortSignal.timeout(graceMs), hurry]);
  await Promise.allSettled(running.map((run) => runtime.waitForRun(run.runId, { signal: grace })));
  const remaining = runtime.activeRuns();
  if (remaining.length > 0)
    logger.warn(
      { runs: remaining.length, forced: hurry.aborted },
      'interrupting runs still active after the grace period',
    );
}
