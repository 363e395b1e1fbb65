/**
 * The claude processes a scenario started, found by walking /proc: their memory and CPU, and the
 * ones still alive after a leg (killed, so one leg's leftovers do not load the next).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { descendantsOf, memoryOf, processCpuMs, processesWithEnvironment } from './proc.mjs';

/** The fake API process and its descendants: under the bench process too, but not claude. */
export function fakeApiTree(apiPid) {
  return new Set([apiPid, ...descendantsOf(apiPid).map((child) => child.pid)]);
}

/** Live claude processes under `rootPid` (every descendant: the daemon's or the bench's CLI children), RSS and peak RSS summed. */
export function claudeUnder(rootPid, excluded = new Set()) {
  const processes = descendantsOf(rootPid).filter((child) => !excluded.has(child.pid));
  let rss = 0;
  let hwm = 0;
  for (const child of processes) {
    const memory = memoryOf(child.pid);
    rss += memory.rssKb || 0;
    hwm += memory.hwmKb || 0;
  }
  return { count: processes.length, rssKb: rss, hwmKb: hwm, pids: processes.map((child) => child.pid) };
}

/** CPU (ms) the given processes use from now to the call of the returned function. */
export function cpuOf(pids) {
  const start = pids.map((pid) => processCpuMs(pid) || 0);
  return () => pids.reduce((sum, pid, index) => sum + ((processCpuMs(pid) || 0) - start[index]), 0);
}

/** Claude processes carrying the bench HOME (there must be none once a leg is closed); any left are killed by pid and reported. */
export async function killLeftoverProcesses(home) {
  // A process may still be on its way out: give it up to 3 s.
  let found = processesWithEnvironment('HOME', home);
  for (let waited = 0; found.length > 0 && waited < 3_000; waited += 100) {
    await sleep(100);
    found = processesWithEnvironment('HOME', home);
  }
  for (const { pid } of found) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone meanwhile.
    }
  }
  return found.length;
}
