/** Waits (bounded) until the rest of the machine is quiet, so a pair is not measured under someone else's load. */
import { setTimeout as sleep } from 'node:timers/promises';
import { machineBusyMs, processCpuMs, selfCpuMs } from './proc.mjs';

/** Cores used by everything except this process and `ownPids`, over `windowMs`. */
export async function foreignCores({ windowMs = 300, ownPids = [] } = {}) {
  const busy = machineBusyMs();
  const self = selfCpuMs();
  const own = ownPids.map((pid) => processCpuMs(pid) || 0);
  await sleep(windowMs);
  const ownMs = ownPids.reduce((sum, pid, index) => sum + ((processCpuMs(pid) || 0) - own[index]), 0);
  return (machineBusyMs() - busy - (selfCpuMs() - self) - ownMs) / windowMs;
}

/** Resolves with the ms waited; gives up after `maxMs` (the pair is then measured anyway, and flagged by its own reading). */
export async function waitForQuiet({ thresholdCores, maxMs, ownPids }) {
  const started = Date.now();
  while (Date.now() - started < maxMs) {
    if ((await foreignCores({ ownPids })) < thresholdCores) break;
  }
  return Date.now() - started;
}
