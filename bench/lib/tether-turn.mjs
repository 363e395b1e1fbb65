/**
 * Leg (b): the same turn through Tether: a fresh runtime over SQLite in a temp data dir, a
 * Claude provider with the explicit environment, one subscriber that consumes every event.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { createClaudeProvider } from '@tether/provider-claude';
import { createAgentRuntime } from '@tether/runtime';
import { openSqliteStore } from '@tether/store-sqlite';
import { childrenOf, commandLine, environmentOf, machineBusyMs, processCpuMs, selfCpuMs } from './proc.mjs';

/** Counts commits and the synchronous time spent in them (the SQLite work runs inside the call). */
export function instrumentStore(store) {
  const stats = { commits: 0, events: 0, batchSizes: [], commitMs: 0 };
  const commit = store.commit.bind(store);
  const wrapped = Object.create(store);
  wrapped.commit = (unit) => {
    const started = performance.now();
    const promise = commit(unit);
    stats.commitMs += performance.now() - started;
    stats.commits += 1;
    stats.events += unit.events.length;
    stats.batchSizes.push(unit.events.length);
    return promise;
  };
  wrapped.close = () => store.close();
  return { store: wrapped, stats };
}

export async function runTetherTurn({ claudePath, environment, workspace, prompt, timeoutMs = 120_000, apiPid, inspectChild = false }) {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'tether-bench-data-'));
  let runtime;
  try {
    const { store, stats } = instrumentStore(await openSqliteStore({ dataDir }));
    runtime = await createAgentRuntime({ providers: [createClaudeProvider({ claudePath, environment })], store });
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: workspace } });

    const controller = new AbortController();
    let start = NaN;
    let firstDeltaMs = NaN;
    let turnMs = NaN;
    let cpuStart = NaN;
    let cpuMs = NaN;
    let apiCpuStart = NaN;
    let apiCpuMs = NaN;
    let busyStart = NaN;
    let busyMs = NaN;
    let delivered = 0;
    let deltas = 0;
    let completed = null;
    const types = {};
    const diagnostics = [];
    let timer;
    // Subscribed before the submit: the generator registers its live listener on the first next().
    const consumer = (async () => {
      for await (const event of runtime.subscribe(sessionId, { afterSeq: 0, signal: controller.signal })) {
        delivered += 1;
        types[event.type] = (types[event.type] ?? 0) + 1;
        if (event.type === 'diagnostic') diagnostics.push(event.code);
        if (event.type === 'run.message_delta') {
          deltas += 1;
          if (deltas === 1) firstDeltaMs = performance.now() - start;
        } else if (event.type === 'run.completed') {
          turnMs = performance.now() - start;
          cpuMs = selfCpuMs() - cpuStart;
          apiCpuMs = processCpuMs(apiPid) - apiCpuStart;
          busyMs = machineBusyMs() - busyStart;
          completed = event;
          return;
        }
      }
    })();
    const timeout = new Promise((_, reject) => {
      timer = setTimeout(() => {
        controller.abort();
        reject(new Error(`tether: no run.completed within ${timeoutMs} ms`));
      }, timeoutMs);
    });

    apiCpuStart = processCpuMs(apiPid);
    busyStart = machineBusyMs();
    cpuStart = selfCpuMs();
    start = performance.now();
    await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: prompt }] });
    try {
      await Promise.race([consumer, timeout]);
    } finally {
      clearTimeout(timer);
    }
    if (completed.outcome !== 'succeeded') throw new Error(`tether: the run ended ${completed.outcome}: ${JSON.stringify(completed.error ?? null)}`);

    // The CLI is still alive (idle) until shutdown: read its CPU and, once, its launch.
    const claude = childrenOf(process.pid).filter((child) => child.pid !== apiPid);
    const childPid = claude.length === 1 ? claude[0].pid : undefined;
    const childCpuMs = childPid ? processCpuMs(childPid) : NaN;
    const launch = inspectChild && childPid ? { argv: commandLine(childPid), env: environmentOf(childPid) } : undefined;

    const shutdownStart = performance.now();
    await runtime.shutdown();
    runtime = undefined;
    return {
      firstDeltaMs,
      turnMs,
      deltas,
      delivered,
      types,
      diagnostics,
      cpuMs,
      childCpuMs,
      apiCpuMs,
      // CPU the rest of the machine used meanwhile (other work competing for the 2 cores).
      foreignCpuMs: busyMs - cpuMs - childCpuMs - apiCpuMs,
      shutdownMs: performance.now() - shutdownStart,
      commits: stats.commits,
      committedEvents: stats.events,
      commitMs: stats.commitMs,
      batchSizes: stats.batchSizes,
      launch,
    };
  } finally {
    if (runtime) await runtime.shutdown().catch(() => {});
    await rm(dataDir, { recursive: true, force: true });
  }
}
