import { pollUntil } from './poll-until.js';
import {
  type ProcessStatus,
  environmentIncludes,
  listProcessIds,
  lookUpEnvironmentEntry,
  readProcessStatus,
  startedWithoutEnvironment,
} from './proc-filesystem.js';

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

export interface SliceOptions {
  /** How many processes are read between two turns of the event loop. Default 8. */
  readonly processesPerSlice?: number;
}

/** The process's status if it is live. */
function liveStatus(pid: number): ProcessStatus | undefined {
  const status = readProcessStatus(pid);
  return status && !isFinished(status.state) ? status : undefined;
}

/** The process if it is live (never this one, nor init) and its environment holds exactly `entry`. */
function withEnvironment(pid: number, entry: string): ProcessIdentity | undefined {
  if (pid === process.pid || pid <= 1) return undefined;
  const status = liveStatus(pid);
  if (!status) return undefined;
  return environmentIncludes(pid, entry) === true ? { pid, startTime: status.startTime } : undefined;
}

/** Lets the event loop run (timers, I/O) before the walk goes on. */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** What `visit` makes of each process of the host, in one synchronous walk; empty without /proc. */
function visitProcesses<T>(visit: (pid: number) => T | undefined): T[] {
  const found: T[] = [];
  for (const pid of listProcessIds()) {
    const result = visit(pid);
    if (result !== undefined) found.push(result);
  }
  return found;
}

/**
 * visitProcesses for a host that must stay responsive (a daemon stopping and sweeping claudes all
 * day): a walk of the whole host is hundreds of blocking /proc reads, and on a loaded machine each
 * one can wait for the CPU, so one walk held the event loop for up to ~250 ms. Here the event
 * loop runs between slices of `processesPerSlice` processes. A process started after the walk
 * began is not seen, so it suits a tree that holds still or a caller that looks again.
 */
async function visitProcessesInSlices<T>(
  visit: (pid: number) => T | undefined,
  { processesPerSlice = 8 }: SliceOptions,
): Promise<T[]> {
  const found: T[] = [];
  const pids = listProcessIds();
  for (let index = 0; index < pids.length; index += 1) {
    if (index > 0 && index % processesPerSlice === 0) await nextTurn();
    const result = visit(pids[index]!);
    if (result !== undefined) found.push(result);
  }
  return found;
}

/** Every live process (never this one, nor init) whose environment holds exactly `entry` (NAME=value); empty without /proc. */
export function findProcessesWithEnvironment(entry: string): ProcessIdentity[] {
  return visitProcesses((pid) => withEnvironment(pid, entry));
}

/** How long a process inside an execve is looked at again (an execve takes well under this). */
const emptyEnvironmentRecheckMs = 200;

/**
 * Whether a process whose environment read empty may be inside an execve: not a kernel thread
 * (kthreadd, pid 2, and its children never have one).
 */
function mayBeInsideExecve(pid: number, status: ProcessStatus | undefined): boolean {
  return status !== undefined && pid !== 2 && status.parentPid !== 2;
}

/**
 * How many looks in a row a process that reads empty must also say it was started with no
 * environment (startedWithoutEnvironment) to be let go: one inside an execve can say so for a moment
 * (3 of ~2,300 empty reads of a shell exec'ing itself), and taken at its word there it was missed.
 */
const startedWithoutEnvironmentLooks = 2;

/**
 * findProcessesWithEnvironment with the event loop running between slices (visitProcessesInSlices).
 * A process in the middle of an execve reads as having no environment at all, and a sweep that
 * missed it left it running (seen: a tool's `setsid sleep` exec'ing as its claude was killed), so
 * such a process is read again until it reads something, ends, or emptyEnvironmentRecheckMs pass.
 */
export async function findProcessesWithEnvironmentInSlices(
  entry: string,
  options: SliceOptions = {},
): Promise<ProcessIdentity[]> {
  const readEmpty: ProcessIdentity[] = [];
  const found = await visitProcessesInSlices((pid) => {
    if (pid === process.pid || pid <= 1) return undefined;
    const status = liveStatus(pid);
    if (!status) return undefined;
    const lookUp = lookUpEnvironmentEntry(pid, entry);
    if (lookUp === 'empty' && mayBeInsideExecve(pid, status)) readEmpty.push({ pid, startTime: status.startTime });
    return lookUp === 'present' ? { pid, startTime: status.startTime } : undefined;
  }, options);
  if (readEmpty.length === 0) return found;
  // Each one's first answer that is not "empty" counts: it may be inside its next execve by the end.
  let unsettled = readEmpty;
  const withoutEnvironment = new Map<number, number>();
  await pollUntil(
    () => {
      unsettled = unsettled.filter((identity) => {
        const status = liveStatus(identity.pid);
        if (status?.startTime !== identity.startTime) return false;
        const lookUp = lookUpEnvironmentEntry(identity.pid, entry);
        if (lookUp === 'present') found.push(identity);
        if (lookUp !== 'empty' || !mayBeInsideExecve(identity.pid, status)) return false;
        const looks = startedWithoutEnvironment(identity.pid) ? (withoutEnvironment.get(identity.pid) ?? 0) + 1 : 0;
        withoutEnvironment.set(identity.pid, looks);
        return looks < startedWithoutEnvironmentLooks;
      });
      return unsettled.length === 0;
    },
    { timeoutMs: emptyEnvironmentRecheckMs, intervalMs: 2 },
  );
  return found;
}

/** The pids of live processes whose environment has NAME=value: how a test finds a session's claude by its unique HOME. */
export function processesWithEnvironment(name: string, value: string): number[] {
  return findProcessesWithEnvironment(`${name}=${value}`).map(({ pid }) => pid);
}

/** The descendants of `rootPid` among `statuses`, by parent pid (breadth first, not the root itself). */
function descendantsAmong(rootPid: number, statuses: readonly ProcessStatus[]): ProcessIdentity[] {
  const children = new Map<number, ProcessIdentity[]>();
  for (const { pid, parentPid, startTime } of statuses) {
    const siblings = children.get(parentPid) ?? [];
    siblings.push({ pid, startTime });
    children.set(parentPid, siblings);
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

/** The live descendants of a process by parent-pid walk (not the process itself); empty without /proc. */
export function snapshotDescendants(rootPid: number): ProcessIdentity[] {
  return descendantsAmong(rootPid, visitProcesses(liveStatus));
}

/**
 * snapshotDescendants with the event loop running between slices (visitProcessesInSlices): right
 * only while the tree holds still (an idle claude), since a process reparented during the walk
 * (its parent exited) is no longer seen as a descendant.
 */
export async function snapshotDescendantsInSlices(
  rootPid: number,
  options: SliceOptions = {},
): Promise<ProcessIdentity[]> {
  return descendantsAmong(rootPid, await visitProcessesInSlices(liveStatus, options));
}
