/** The provider's warm pool (a spare claude started ahead of the next session), when the build has it. */
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { agentChildrenOf, processCpuMs } from './proc.mjs';

const lookMs = 100;

/**
 * How long a spare that is timed stays idle first: a parked CLI 2.1.332 still collects the garbage of
 * its start-up one to two seconds after it went idle (~40 ms of its CPU on two cores), and a claim
 * made in that window pays for it. The legs' spares reached the clock at different ages (Tether's
 * waits out its first session's close as well), so without this the row measured when each was
 * claimed, not the driver; a pool's spare in use has waited far longer than this.
 */
export const spareSettledMs = 3_000;

/**
 * The warm pool's spare is ready when a claude child that belongs to no session exists and has
 * gone idle (initialize answered): its CPU time stops growing for `idleMs` (`spareSettledMs` before a
 * timed claim). `minimumSpares`: how many of the host's claude children must be there, all idle (a
 * session's own process besides the spare). Bounded; resolves with the ms waited. Throws when no spare appeared at all: a leg
 * measured then would time a spare's start-up, not a claim.
 */
export async function waitForIdleSpare({ apiPid, idleMs = 300, timeoutMs = 15_000 + idleMs, minimumSpares = 1 }) {
  const started = performance.now();
  let previous = new Map();
  let stableRounds = 0;
  let seen = false;
  let enough = false;
  while (performance.now() - started < timeoutMs) {
    const spares = agentChildrenOf(process.pid, apiPid);
    seen ||= spares.length > 0;
    enough ||= spares.length >= minimumSpares;
    const cpu = new Map(spares.map((child) => [child.pid, processCpuMs(child.pid)]));
    const idle =
      spares.length >= minimumSpares &&
      spares.every((child) => previous.has(child.pid) && cpu.get(child.pid) - previous.get(child.pid) <= 10);
    stableRounds = idle ? stableRounds + 1 : 0;
    if (stableRounds * lookMs >= idleMs) break;
    previous = cpu;
    await sleep(lookMs);
  }
  if (!seen) throw new Error(`no spare process appeared within ${timeoutMs} ms`);
  if (!enough) throw new Error(`fewer than ${minimumSpares} claude processes appeared within ${timeoutMs} ms`);
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
