import { readFileSync, readdirSync } from 'node:fs';

/**
 * Live processes (Linux /proc) whose environment holds NAME=value: how a test finds the claude
 * child of a session (every child carries the test's unique HOME) without reaching into internals.
 * Zombies count as dead.
 */
export function processesWithEnvironment(name: string, value: string): number[] {
  const wanted = `${name}=${value}`;
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (pid === process.pid) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
      if (state === 'Z' || state === 'X') continue;
      const environment = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
      if (environment.includes(wanted)) found.push(pid);
    } catch {
      // The process ended while we looked, or is not ours to read.
    }
  }
  return found;
}
