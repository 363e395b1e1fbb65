/** The provider's warm pool (a spare claude started ahead of the next session), when the build has it. */
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { childrenOf, processCpuMs } from './proc.mjs';

/**
 * The warm pool's spare is ready when a claude child that belongs to no session exists and has
 * gone idle (initialize answered): its CPU time stops growing. Bounded; resolves with the ms waited.
 * Throws when no spare appeared at all: a leg measured then would time a spare's start-up, not a claim.
 */
export async function waitForIdleSpare({ apiPid, timeoutMs = 15_000 }) {
  const started = performance.now();
  let previous = new Map();
  let stableRounds = 0;
  let seen = false;
  while (performance.now() - started < timeoutMs) {
    const spares = childrenOf(process.pid).filter((child) => child.pid !== apiPid);
    seen ||= spares.length > 0;
    const cpu = new Map(spares.map((child) => [child.pid, processCpuMs(child.pid)]));
    const idle =
      spares.length > 0 &&
      spares.every((child) => previous.has(child.pid) && cpu.get(child.pid) - previous.get(child.pid) <= 10);
    stableRounds = idle ? stableRounds + 1 : 0;
    if (stableRounds >= 3) break;
    previous = cpu;
    await sleep(100);
  }
  if (!seen) throw new Error(`no spare process appeared within ${timeoutMs} ms`);
  return performance.now() - started;
}

/** Whether the built provider accepts `warmPool` (being added to the product; used only if present). */
export function warmPoolAvailable(repoRoot) {
  try {
    return /\bwarmPool\??:/.test(
      readFileSync(`${repoRoot}/packages/provider-claude/dist/claude-provider.d.ts`, 'utf8'),
    );
  } catch {
    return false;
  }
}
