/**
 * Memory per idle open session: N sessions each after one turn, with their claude processes kept
 * alive, then released after an idle timeout, to show what a session costs beyond its CLI.
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { claudeUnder, fakeApiTree } from './claude-processes.mjs';
import { heapAfterGarbageCollection } from './garbage-collection.mjs';
import { rssKb } from './proc.mjs';
import { SHORT } from './scripted-prompts.mjs';
import { EventWatch, startTether, tetherTurn } from './tether-harness.mjs';

async function memoryVariant(context, { sessions, variant, log }) {
  const released = variant === 'released';
  const tether = await startTether({
    ...context,
    provider: { maxProcesses: sessions + 2, idleReleaseMs: released ? 250 : 0 },
  });
  const watches = [];
  try {
    // The baseline: the runtime is up, no session yet.
    await sleep(200);
    const heapBefore = heapAfterGarbageCollection();
    const rssBefore = rssKb();
    const started = performance.now();
    for (let index = 0; index < sessions; index += 1) {
      const { sessionId } = await tether.runtime.openSession({
        workspace: { kind: 'directory', path: context.workspace },
      });
      const watch = new EventWatch(tether.runtime, sessionId);
      watches.push({ sessionId, watch });
      await tetherTurn(tether.runtime, watch, sessionId, SHORT);
    }
    const openMs = performance.now() - started;
    if (released) {
      await Promise.all(
        watches.map(({ watch }) => watch.waitFor((event) => event.type === 'session.process_stopped', 0, 30_000)),
      );
    }
    await sleep(500);
    const heapAfter = heapAfterGarbageCollection();
    const rssAfter = rssKb();
    // The fake API runs under this process too: only the claude processes count.
    const children = claudeUnder(process.pid, fakeApiTree(context.apiPid));
    const benchKb = rssAfter - rssBefore;
    const result = {
      variant,
      sessions,
      openMs,
      claudeProcesses: children.count,
      claudeRssKb: children.rssKb,
      benchRssDeltaKb: benchKb,
      benchHeapDeltaBytes: heapAfter - heapBefore,
      perSessionKb: (benchKb + children.rssKb) / sessions,
      perSessionBenchKb: benchKb / sessions,
      perSessionClaudeKb: children.rssKb / sessions,
      perSessionHeapBytes: (heapAfter - heapBefore) / sessions,
    };
    log?.(
      `bench: memory ${variant}: ${sessions} sessions in ${(openMs / 1000).toFixed(1)} s; ${children.count} claude processes, ${(children.rssKb / 1024).toFixed(0)} MiB; ` +
        `bench RSS +${(benchKb / 1024).toFixed(1)} MiB, heap +${((heapAfter - heapBefore) / 2 ** 20).toFixed(2)} MiB; per session ${(result.perSessionKb / 1024).toFixed(2)} MiB`,
    );
    return result;
  } finally {
    for (const { watch } of watches) await watch.stop();
    await tether.dispose();
  }
}

export async function measureMemory(context, { sessions, log }) {
  const alive = await memoryVariant(context, { sessions, variant: 'alive', log });
  const released = await memoryVariant(context, { sessions, variant: 'released', log });
  return { alive, released, ratio: alive.perSessionKb / released.perSessionKb };
}
