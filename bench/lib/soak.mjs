/**
 * Soak: many open/turn/close cycles through one runtime, with file descriptors, memory and live
 * claude processes compared before and after, to catch what leaks only slowly.
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { heapAfterGarbageCollection } from './garbage-collection.mjs';
import { isAlive, openFdCount, processesWithEnvironment, rssKb } from './proc.mjs';
import { SHORT } from './scripted-prompts.mjs';
import { EventWatch, startTether, tetherTurn } from './tether-harness.mjs';

export async function measureSoak(context, { cycles, log }) {
  const home = context.environment.HOME;
  const tether = await startTether(context);
  const cycleMs = [];
  const stoppedReasons = {};
  let notGoneAtResolve = 0;
  // The heap half-way too: what the second half adds is what one more closed session costs once
  // the runtime's cache of recently closed sessions is full (it keeps 100 by default).
  let halfway = null;
  try {
    await sleep(200);
    const before = {
      fds: openFdCount(),
      rssKb: rssKb(),
      heapBytes: heapAfterGarbageCollection(),
      claude: processesWithEnvironment('HOME', home).length,
    };
    const started = performance.now();
    for (let index = 0; index < cycles; index += 1) {
      const cycleStart = performance.now();
      const { sessionId } = await tether.runtime.openSession({
        workspace: { kind: 'directory', path: context.workspace },
      });
      const watch = new EventWatch(tether.runtime, sessionId);
      await tetherTurn(tether.runtime, watch, sessionId, SHORT);
      const pid = watch.latestPid();
      const mark = watch.mark();
      await tether.runtime.closeSession({ sessionId });
      cycleMs.push(performance.now() - cycleStart);
      if (pid !== undefined && isAlive(pid)) notGoneAtResolve += 1;
      const stopped = await watch
        .waitFor((event) => event.type === 'session.process_stopped', mark, 5_000)
        .catch(() => null);
      stoppedReasons[stopped?.event.reason ?? 'none'] = (stoppedReasons[stopped?.event.reason ?? 'none'] ?? 0) + 1;
      await watch.stop();
      if (index + 1 === Math.floor(cycles / 2))
        halfway = { cycles: index + 1, heapBytes: heapAfterGarbageCollection() };
      if ((index + 1) % 50 === 0)
        log?.(
          `bench: soak ${index + 1}/${cycles} cycles, ${((performance.now() - started) / 1000).toFixed(1)} s, ${openFdCount()} fds`,
        );
    }
    const totalMs = performance.now() - started;
    await sleep(200);
    const after = {
      fds: openFdCount(),
      rssKb: rssKb(),
      heapBytes: heapAfterGarbageCollection(),
      claude: processesWithEnvironment('HOME', home).length,
    };
    const sessionsListed = (await tether.runtime.listSessions()).length;
    await tether.dispose();
    const afterShutdown = { fds: openFdCount(), claude: processesWithEnvironment('HOME', home).length };
    return {
      cycles,
      totalMs,
      cycleMs,
      before,
      halfway,
      after,
      afterShutdown,
      notGoneAtResolve,
      stoppedReasons,
      sessionsListed,
    };
  } finally {
    await tether.dispose();
  }
}
