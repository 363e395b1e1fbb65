import { processesWithEnvironment } from '@tether/provider-claude/test-support';

/**
 * SIGKILLs every live process whose environment holds NAME=value (a test's claude and what its tools
 * started), as a crash would. One that ended between the scan and its signal (a tool's short-lived
 * helper) is passed over: it is gone, as asked.
 */
export function killProcessesWithEnvironment(name: string, value: string): void {
  for (const pid of processesWithEnvironment(name, value)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
    }
  }
}
