import { readFileSync } from 'node:fs';
import { pollFor, readProcessEnvironment, readProcessStatus } from '@tether/provider-claude/test-support';
import { type ClaudeTestEnvironment, processesWithEnvironment } from '@tether/testkit';
import { expect, it } from 'vitest';
import { describeTransports } from '../conformance/conformance-harness.js';

// A forced shutdown (a second SIGTERM, a host that must exit now) ends a hung warm spare at once:
// SIGKILL to its group, never the graceful EOF-then-SIGTERM path a stopped process cannot take part in.

/** The agents Tether supervises in this environment (the `--version` check carries no marker). */
function agentProcesses(environment: ClaudeTestEnvironment): number[] {
  return processesWithEnvironment('HOME', environment.home).filter((pid) =>
    readProcessEnvironment(pid)?.some((entry) => entry.startsWith('TETHER_PROCESS_MARKER=')),
  );
}

/** The signals pending for `pid` (process- and thread-directed), from /proc/PID/status; undefined once it is gone. */
function pendingSignals(pid: number): Set<number> | undefined {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return undefined;
  }
  const pending = new Set<number>();
  for (const field of ['SigPnd', 'ShdPnd']) {
    const mask = BigInt(
      `0x${/^(?:SigPnd|ShdPnd):\s*([0-9a-f]+)$/m.exec(status.slice(status.indexOf(`${field}:`)))?.[1] ?? '0'}`,
    );
    for (let signal = 1; signal <= 64; signal += 1) if ((mask >> BigInt(signal - 1)) & 1n) pending.add(signal);
  }
  return pending;
}

/**
 * Watches a stopped process until it is gone: every signal seen pending. A
 * stopped process takes no signal but SIGKILL (and SIGCONT), so a SIGTERM sent to it stays pending.
 */
function watchUntilGone(pid: number): { done: Promise<void>; signals: Set<number> } {
  const signals = new Set<number>();
  const done = new Promise<void>((resolve) => {
    const look = () => {
      const pending = pendingSignals(pid);
      if (pending === undefined) return resolve();
      for (const signal of pending) signals.add(signal);
      setTimeout(look, 2);
    };
    look();
  });
  return { done, signals };
}

describeTransports('a forced shutdown with a hung warm spare', ({ start }) => {
  it('SIGKILLs the SIGSTOPped spare at once (no EOF-and-SIGTERM grace) and leaves nothing of it', async () => {
    const environment = await start();
    const runtime = await environment.runtime({ provider: { warmPool: { spares: 1 } } });
    await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    const spare = await pollFor(() => agentProcesses(environment)[0]);
    process.kill(spare, 'SIGSTOP');
    await pollFor(() => (readProcessStatus(spare)?.state === 'T' ? true : undefined));
    const watched = watchUntilGone(spare);
    await runtime.shutdown({ force: true });
    // Nothing of the test's HOME is left the moment shutdown returns.
    expect(processesWithEnvironment('HOME', environment.home)).toEqual([]);
    await watched.done;
    // Only SIGKILL ended it: no SIGTERM ever waited on it.
    expect(watched.signals.has(15)).toBe(false);
  });
});
