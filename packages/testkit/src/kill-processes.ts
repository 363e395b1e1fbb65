import { pollUntil, processesWithEnvironment, readProcessCommandLine } from '@tether/provider-claude/test-support';

/**
 * SIGKILLs every live process whose environment holds NAME=value (a test's claude and what its tools
 * started), as a crash would. One that ended between the scan and its signal (a tool's short-lived
 * helper) is passed over: it is gone, as asked.
 */
export function killProcessesWithEnvironment(name: string, value: string): number[] {
  const killed = processesWithEnvironment(name, value);
  for (const pid of killed) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
    }
  }
  return killed;
}

/**
 * Ends what is left of a test's processes (every one whose environment holds NAME=value): described
 * first, since what they were is a failure's whole message, then SIGKILLed, and waited for (at most
 * 10 s) until none is left. Returns each one's pid and description (pid and command line): none, when
 * none was left.
 */
export async function endProcessesWithEnvironment(
  name: string,
  value: string,
): Promise<{ readonly pid: number; readonly description: string }[]> {
  const left = processesWithEnvironment(name, value).map((pid) => ({ pid, description: describeProcess(pid) }));
  if (killProcessesWithEnvironment(name, value).length > 0) {
    await pollUntil(() => processesWithEnvironment(name, value).length === 0, { timeoutMs: 10_000, intervalMs: 10 });
  }
  return left;
}

function describeProcess(pid: number): string {
  const commandLine = readProcessCommandLine(pid);
  return `${pid} ${commandLine ? commandLine.join(' ').slice(0, 300) : '(gone)'}`;
}
