/**
 * Leg (b): the same turns through Tether: a fresh runtime over SQLite in a temp data dir, a
 * Claude provider with the explicit environment, one subscriber that consumes every event.
 * Turn 1 is cold (Tether spawns the CLI on the first turn); later turns reuse the process.
 * `provider` adds settings (the transport scenario's `transport`); `beforeShutdown` runs while the
 * session's process is still alive after the last turn (memory readings), its result returned.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { createClaudeProvider } from '@tether/provider-claude';
import { createAgentRuntime } from '@tether/runtime';
import { openSqliteStore } from '@tether/store-sqlite';
import { agentChildrenOf, commandLine, environmentOf, machineBusyMs, processCpuMs, selfCpuMs } from './proc.mjs';

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

export async function runTetherTurns({
  claudePath,
  environment,
  workspace,
  prompt,
  turns = 2,
  timeoutMs = 120_000,
  apiPid,
  inspectChild = false,
  provider = {},
  beforeShutdown,
}) {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'tether-bench-data-'));
  let runtime;
  const controller = new AbortController();
  try {
    const { store, stats } = instrumentStore(await openSqliteStore({ dataDir }));
    runtime = await createAgentRuntime({
      providers: [createClaudeProvider({ claudePath, environment, ...provider })],
      store,
    });
    const openStart = performance.now();
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: workspace } });

    let current = null;
    let delivered = 0;
    const types = {};
    const diagnostics = [];
    // Subscribed before the first submit: the generator registers its live listener on the first next().
    const consumer = (async () => {
      for await (const event of runtime.subscribe(sessionId, { afterSeq: 0, signal: controller.signal })) {
        delivered += 1;
        types[event.type] = (types[event.type] ?? 0) + 1;
        if (event.type === 'diagnostic') diagnostics.push(event.code);
        if (!current) continue;
        current.delivered += 1;
        if (event.type === 'run.message_delta') {
          // One event may carry several of the agent's deltas (a block's waiting deltas are joined):
          // count the events and the text they carry, never the events as deltas.
          current.deltaEvents += 1;
          current.textChars += event.text.length;
          if (current.deltaEvents === 1) current.firstDeltaMs = performance.now() - current.start;
        } else if (event.type === 'run.completed') {
          const turn = current;
          current = null;
          turn.turnMs = performance.now() - turn.start;
          turn.cpuMs = selfCpuMs() - turn.cpuStart;
          turn.apiCpuMs = processCpuMs(apiPid) - turn.apiCpuStart;
          turn.busyMs = machineBusyMs() - turn.busyStart;
          turn.outcome = event;
          turn.resolve();
        }
      }
    })();
    consumer.catch(() => {});

    let childPid;
    let launch;
    let openMs;
    const results = [];
    for (let index = 0; index < turns; index += 1) {
      const commitsBefore = stats.commits;
      const commitMsBefore = stats.commitMs;
      const batchesBefore = stats.batchSizes.length;
      const childCpuStart = childPid ? processCpuMs(childPid) : 0;
      let resolve;
      const done = new Promise((settle) => {
        resolve = settle;
      });
      current = {
        resolve,
        deltaEvents: 0,
        textChars: 0,
        delivered: 0,
        firstDeltaMs: NaN,
        apiCpuStart: processCpuMs(apiPid),
        busyStart: machineBusyMs(),
        cpuStart: selfCpuMs(),
        start: performance.now(),
      };
      const turn = current;
      // openSession called → the first submit: with the first turn's submit → first delta, open → first delta.
      openMs ??= turn.start - openStart;
      await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: prompt }] });
      let timer;
      await Promise.race([
        done,
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error(`tether: no run.completed within ${timeoutMs} ms`)), timeoutMs);
        }),
      ]).finally(() => clearTimeout(timer));
      if (turn.outcome.outcome !== 'succeeded')
        throw new Error(`tether: the run ended ${turn.outcome.outcome}: ${JSON.stringify(turn.outcome.error ?? null)}`);
      // The CLI stays alive (idle) between turns and until shutdown: read its CPU (and, once, its launch).
      if (!childPid) {
        const claude = agentChildrenOf(process.pid, apiPid);
        childPid = claude.length === 1 ? claude[0].pid : undefined;
        if (inspectChild && childPid) launch = { argv: commandLine(childPid), env: environmentOf(childPid) };
      }
      const childCpuMs = childPid ? processCpuMs(childPid) - childCpuStart : NaN;
      results.push({
        turnMs: turn.turnMs,
        firstDeltaMs: turn.firstDeltaMs,
        deltaEvents: turn.deltaEvents,
        textChars: turn.textChars,
        delivered: turn.delivered,
        cpuMs: turn.cpuMs,
        childCpuMs,
        apiCpuMs: turn.apiCpuMs,
        // CPU the rest of the machine used meanwhile (other work competing for the cores).
        foreignCpuMs: turn.busyMs - turn.cpuMs - childCpuMs - turn.apiCpuMs,
        commits: stats.commits - commitsBefore,
        commitMs: stats.commitMs - commitMsBefore,
        batchSizes: stats.batchSizes.slice(batchesBefore),
      });
    }

    const sample = beforeShutdown ? await beforeShutdown() : undefined;
    const shutdownStart = performance.now();
    await runtime.shutdown();
    runtime = undefined;
    return {
      turns: results,
      delivered,
      types,
      diagnostics,
      shutdownMs: performance.now() - shutdownStart,
      launch,
      openMs,
      sample,
    };
  } finally {
    controller.abort();
    if (runtime) await runtime.shutdown().catch(() => {});
    await rm(dataDir, { recursive: true, force: true });
  }
}
