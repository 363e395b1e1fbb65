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

function describeProcess(pid: number): string {
  const commandLine = readProcessCommandLine(pid);
  return `${pid} ${commandLine ? commandLine.join(' ').slice(0, 300) : '(gone)'}`;
}
