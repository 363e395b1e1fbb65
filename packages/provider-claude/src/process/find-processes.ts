import { environmentIncludes, listProcessIds, readProcessStatus } from './proc-filesystem.js';

/**
 * Finding processes in /proc: by an entry of their environment, or by descent. Supervision finds a
 * claude's strays by its marker with these; tests and the benchmark find a session's claude by its
 * unique HOME with the same code (through the test-support export), so there is one scanner.
 */

/** One process, robust to pid reuse: the same pid with another start time is another process. */
export interface ProcessIdentity {
  readonly pid: number;
  readonly startTime: number;
}

function isFinished(state: string): boolean {
  return state === 'Z' || state === 'X';
}

/** The process if it is live (never this one, nor init) and its environment holds exactly `entry`. */
function withEnvironment(pid: number, entry: string): ProcessIdentity | undefined {
  if (pid === process.pid || pid <= 1) return undefined;
  const status = readProcessStatus(pid);
  if (!status || isFinished(status.state)) return undefined;
  return environmentIncludes(pid, entry) === true ? { pid, startTime: status.startTime } : undefined;
}

/** Every live process (never this one, nor init) whose environment holds exactly `entry` (NAME=value); empty without /proc. */
export function findProcessesWithEnvironment(entry: string): ProcessIdentity[] {
  const found: ProcessIdentity[] = [];
  for (const pid of listProcessIds()) {
    const identity = withEnvironment(pid, entry);
    if (identity) found.push(identity);
  }
  return found;
}

/**
 * findProcessesWithEnvironment for a host that must stay responsive (a daemon sweeping after every
 * claude exit): two /proc reads per process of the whole host are hundreds of blocking syscalls,
 * and on a loaded machine each one can wait for the CPU, so one scan held the event loop for up to
 * ~250 ms. Here the event loop runs between slices of `processesPerSlice` processes.
 */
export async function findProcessesWithEnvironmentInSlices(
  entry: string,
  { processesPerSlice = 8 }: { readonly processesPerSlice?: number } = {},
): Promise<ProcessIdentity[]> {
  const found: ProcessIdentity[] = [];
  const pids = listProcessIds();
  for (let index = 0; index < pids.length; index += 1) {
    if (index > 0 && index % processesPerSlice === 0) await new Promise<void>((resolve) => setImmediate(resolve));
    const identity = withEnvironment(pids[index]!, entry);
    if (identity) found.push(identity);
  }
  return found;
}

/** The pids of live processes whose environment has NAME=value: how a test finds a session's claude by its unique HOME. */
export function processesWithEnvironment(name: string, value: string): number[] {
  return findProcessesWithEnvironment(`${name}=${value}`).map(({ pid }) => pid);
}

/** The live descendants of a process by parent-pid walk (not the process itself); empty without /proc. */
export function snapshotDescendants(rootPid: number): ProcessIdentity[] {
  const children = new Map<number, ProcessIdentity[]>();
  for (const pid of listProcessIds()) {
    const status = readProcessStatus(pid);
    if (!status || isFinished(status.state)) continue;
    const siblings = children.get(status.parentPid) ?? [];
    siblings.push({ pid, startTime: status.startTime });
    children.set(status.parentPid, siblings);
  }
  const found: ProcessIdentity[] = [];
  const queue = [rootPid];
  const seen = new Set(queue);
  while (queue.length > 0) {
    for (const child of children.get(queue.shift()!) ?? []) {
      if (seen.has(child.pid)) continue;
      seen.add(child.pid);
      found.push(child);
      queue.push(child.pid);
    }
  }
  return found;
}
