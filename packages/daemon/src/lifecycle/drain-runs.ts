import type { AgentRuntime } from '@tether/runtime';
import type { DaemonLogger } from '../logging/create-logger.js';

// After the grace, an interrupt normally lands within a second; past this the runtime's own shutdown ends the run.
const interruptWaitMs = 5_000;

/** Resolves with the promise's value, or undefined once the signal aborts (the promise is left to settle on its own). */
function until<T>(promise: Promise<T>, signal: AbortSignal): Promise<T | undefined> {
  if (signal.aborted) return Promise.resolve(undefined);
  return new Promise((resolve, reject) => {
    const onAbort = () => resolve(undefined);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/** Only a running or waiting session has an active run: those are in memory, so no closed one is read. */
async function activeRuns(runtime: AgentRuntime): Promise<Array<{ sessionId: string; runId: string }>> {
  const sessions = (
    await Promise.all((['running', 'waiting'] as const).map((state) => runtime.listSessions({ state })))
  ).flat();
  return sessions.flatMap((session) =>
    session.activeRunId === null ? [] : [{ sessionId: session.sessionId, runId: session.activeRunId }],
  );
}

/**
 * The first half of a graceful shutdown: active runs get `graceMs` to finish (their run.completed
 * is awaited), then the rest are interrupted, so each ends `interrupted` by a real stop rather than
 * being cut off by the runtime's shutdown. From its start no queued follow-up starts (a run that
 * ends would otherwise hand its session to the next one): they stay queued, and the next start
 * cancels them `runtime_restarted` (docs/protocol.md, "Follow-ups").
 */
export async function drainRuns(runtime: AgentRuntime, graceMs: number, logger: DaemonLogger): Promise<void> {
  runtime.beginShutdown();
  const running = await activeRuns(runtime);
  if (running.length === 0) return;
  logger.info({ runs: running.length, graceMs }, 'waiting for active runs to finish');
  const grace = AbortSignal.timeout(graceMs);
  await Promise.allSettled(running.map((run) => runtime.waitForRun(run.runId, { signal: grace })));
  const remaining = await activeRuns(runtime);
  if (remaining.length === 0) return;
  logger.warn({ runs: remaining.length }, 'interrupting runs still active after the grace period');
  const bound = AbortSignal.timeout(interruptWaitMs);
  await Promise.allSettled(
    remaining.map(async (run) => {
      await until(runtime.interruptRun({ sessionId: run.sessionId, runId: run.runId }), bound);
      await runtime.waitForRun(run.runId, { signal: bound });
    }),
  );
}
