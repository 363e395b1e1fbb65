/**
 * The load scenario (opt-in: --scenarios load): many open sessions, few agent processes. A daemon
 * in its own process (bench/daemon-server.mjs) with the default process limit (8) gets N open
 * sessions (default 1,000) through @tether/client, then T turns at once (default 50), one each on
 * T distinct sessions picked at random, each turn a short scripted answer.
 *
 * Reported:
 * - until the last turn completes: first submitTurn called -> the last run.completed received on
 *   its session's SSE subscription (every turn must succeed);
 * - per turn, the wait for a process: run.started -> session.process_started, both stamped by the
 *   daemon (the events' `at`, ms resolution); p50/p99 over all turns and over the queued ones
 *   (those with run.queued), and how many were queued;
 * - daemon memory per idle open session: (daemon RSS after opening N sessions - before any), / N,
 *   each read after a full GC in the daemon (it runs with --expose-gc), with the V8 heap's share.
 * The claude processes alive at the end are counted too: never more than the process limit.
 */
import { performance } from 'node:perf_hooks';
import { createTetherClient } from '@tether/client';
import { claudeUnder } from './claude-processes.mjs';
import { memoryOf } from './proc.mjs';
import { startDaemonProcess } from './daemon-process.mjs';
import { SHORT } from './scripted-prompts.mjs';
import { quantile, round } from './stats.mjs';
import { EventWatch } from './tether-harness.mjs';

/** Daemon RSS and heap after a full GC in the daemon, in KiB. */
export async function settledMemory(daemon) {
  const usage = await daemon.request({ type: 'memory', gc: true }, 60_000);
  return { rssKb: memoryOf(daemon.pid).rssKb, heapUsedKb: usage.heapUsed / 1024 };
}

/** `count` distinct indexes below `total`, in random order. */
export function pickDistinct(count, total) {
  const indexes = Array.from({ length: total }, (_, index) => index);
  for (let index = 0; index < count; index += 1) {
    const swap = index + Math.floor(Math.random() * (total - index));
    [indexes[index], indexes[swap]] = [indexes[swap], indexes[index]];
  }
  return indexes.slice(0, count);
}

/** p50/p99/max of a list of ms, rounded; null when empty. */
export function spread(values) {
  if (values.length === 0) return null;
  return {
    p50: round(quantile(values, 0.5)),
    p99: round(quantile(values, 0.99)),
    max: round(Math.max(...values)),
    count: values.length,
  };
}

/** Opens `count` sessions on the workspace folder, 20 at a time: as fast as the daemon takes them, without one burst of 1,000 requests. Their ids, in order. */
export async function openMany(client, workspace, count) {
  const ids = [];
  for (let index = 0; index < count; index += 20) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(20, count - index) }, () =>
        client.openSession({ workspace: { kind: 'directory', path: workspace } }),
      ),
    );
    ids.push(...batch.map((receipt) => receipt.sessionId));
  }
  return ids;
}

export async function measureLoad(context, { sessions, turns, maxProcesses = 8, repoRoot, log }) {
  if (turns > sessions) throw new Error('load scenario: --load-turns must not exceed --load-sessions');
  const daemon = await startDaemonProcess({
    repoRoot,
    claudePath: context.claudePath,
    environment: context.environment,
    maxProcesses,
  });
  const watches = [];
  try {
    const client = createTetherClient({ url: daemon.url, token: daemon.token });
    const before = await settledMemory(daemon);
    const openStarted = performance.now();
    const ids = await openMany(client, context.workspace, sessions);
    const openMs = performance.now() - openStarted;
    const after = await settledMemory(daemon);
    const perSession = {
      rssKb: round((after.rssKb - before.rssKb) / sessions, 1),
      heapKb: round((after.heapUsedKb - before.heapUsedKb) / sessions, 1),
    };
    log(
      `bench: load: ${sessions} sessions opened in ${round(openMs / 1000, 2)} s; daemon RSS ${round(before.rssKb / 1024)} -> ${round(after.rssKb / 1024)} MiB = ${perSession.rssKb} KiB per idle session (heap ${perSession.heapKb} KiB)`,
    );

    const chosen = pickDistinct(turns, sessions).map((index) => ids[index]);
    for (const sessionId of chosen) watches.push({ sessionId, watch: new EventWatch(client, sessionId) });
    // Every SSE stream replayed session.opened before the first submit.
    await Promise.all(watches.map(({ watch }) => watch.waitFor(() => true, 0, 30_000)));
    const started = performance.now();
    const results = await Promise.all(
      watches.map(async ({ sessionId, watch }) => {
        const { runId } = await client.submitTurn({ sessionId, input: [{ type: 'text', text: SHORT }] });
        const completed = await watch.waitFor(
          (event) => event.type === 'run.completed' && event.runId === runId,
          0,
          600_000,
        );
        if (completed.event.outcome !== 'succeeded')
          throw new Error(
            `load scenario: a run ended ${completed.event.outcome}: ${JSON.stringify(completed.event.error ?? null)}`,
          );
        const events = watch.events.map((entry) => entry.event);
        const runStarted = events.find((event) => event.type === 'run.started' && event.runId === runId);
        const queued = events.find((event) => event.type === 'run.queued' && event.runId === runId);
        const processStarted = events.find(
          (event) => event.type === 'session.process_started' && event.seq > runStarted.seq,
        );
        return {
          completedMs: completed.at - started,
          waitMs: Date.parse(processStarted.at) - Date.parse(runStarted.at),
          queuedAt: queued?.position ?? null,
        };
      }),
    );
    const lastMs = Math.max(...results.map((result) => result.completedMs));
    const claude = claudeUnder(daemon.pid);
    const queued = results.filter((result) => result.queuedAt !== null);
    const summary = {
      sessions,
      turns,
      maxProcesses,
      openMs: round(openMs),
      lastTurnCompletedMs: round(lastMs),
      turnCompleted: spread(results.map((result) => result.completedMs)),
      waitForProcess: spread(results.map((result) => result.waitMs)),
      queued: {
        count: queued.length,
        wait: spread(queued.map((result) => result.waitMs)),
        maxPosition: queued.length > 0 ? Math.max(...queued.map((result) => result.queuedAt)) : null,
      },
      memory: { beforeRssKb: before.rssKb, afterRssKb: after.rssKb, perIdleSession: perSession },
      claudeAliveAtEnd: claude.count,
    };
    log(
      `bench: load: ${turns} turns at once on ${turns} of ${sessions} sessions, ${maxProcesses} processes: last completed after ${round(lastMs / 1000, 2)} s; ` +
        `wait for a process p50 ${summary.waitForProcess.p50} p99 ${summary.waitForProcess.p99} ms (${queued.length} queued: p50 ${summary.queued.wait?.p50 ?? '-'} p99 ${summary.queued.wait?.p99 ?? '-'} ms); claude alive at the end ${claude.count}`,
    );
    return summary;
  } finally {
    for (const { watch } of watches) await watch.stop();
    await daemon.stop();
  }
}
