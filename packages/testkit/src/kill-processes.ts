import { rm } from 'node:fs/promises';
import { pollUntil, processesWithEnvironment, readProcessCommandLine } from '@tether/provider-claude/test-support';

/**
 * SIGKILLs every live process whose environment holds NAME=value (a test's claude and what its tools
 * started), as a crash would. One that ended between the scan and its signal (a tool's short-lived
 * helper) is passed over: it is gone, as asked.
 */
export function killProcessesWithEnvironment(name: string, value: string): void {
  for (const pid of processesWithEnvironment(name, value)) killProcess(pid);
}

/** SIGKILLs one process; false when it had ended already. */
function killProcess(pid: number): boolean {
  try {
    process.kill(pid, 'SIGKILL');
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
    return false;
  }
}

/**
 * Ends what is left of a test's processes (every one whose environment holds NAME=value): each is
 * described, since what it was is a failure's whole message, then SIGKILLed; the ones that were still
 * there to kill are waited for (at most 10 s) and returned, pid and description (pid and command
 * line). One that ended on its own between the scan and its signal is not counted.
 */
export async function endProcessesWithEnvironment(
  name: string,
  value: string,
): Promise<{ readonly pid: number; readonly description: string }[]> {
  const ended: { pid: number; description: string }[] = [];
  for (const pid of processesWithEnvironment(name, value)) {
    const description = describeProcess(pid);
    if (killProcess(pid)) ended.push({ pid, description });
  }
  if (ended.length > 0) {
    await pollUntil(() => processesWithEnvironment(name, value).length === 0, { timeoutMs: 10_000, intervalMs: 10 });
  }
  return ended;
}

/**
 * A test's last step: ends every process still carrying its HOME (one left running would write into
 * its folder again), removes the folder whatever happens, then fails naming what outlived the test:
 * every process Tether starts must end with it. `onPurpose` says what a test that kills a Tether
 * process on purpose does first.
 */
export async function endTestProcessesAndFolder(home: string, folder: string, onPurpose: string): Promise<void> {
  const left = await endProcessesWithEnvironment('HOME', home).finally(() =>
    rm(folder, { recursive: true, force: true }),
  );
  if (left.length > 0) {
    throw new Error(
      `${left.length} process(es) of this test outlived it (every process Tether starts must end with it; ${onPurpose}): ${left.map((process) => process.description).join('; ')}`,
    );
  }
}

function describeProcess(pid: number): string {
  const commandLine = readProcessCommandLine(pid);
  return `${pid} ${commandLine ? commandLine.join(' ').slice(0, 300) : '(gone)'}`;
}
