import { readFileSync, readdirSync } from 'node:fs';

/**
 * What Linux /proc says about processes: the only portable-enough way for Node to see other
 * processes' parents, groups, start times and environments without a native addon.
 *
 * Off Linux (macOS, the BSDs, Windows) there is no /proc: every reader here returns `undefined`
 * or an empty list, and callers fall back to process-group signals alone. macOS could read the
 * same facts through sysctl(KERN_PROC / KERN_PROCARGS2) or `ps -E`, which is not done yet.
 */

/** The fields of /proc/<pid>/stat that supervision needs. */
export interface ProcessStatus {
  readonly pid: number;
  /** The command name (comm): at most 15 bytes, may contain spaces and parentheses. */
  readonly command: string;
  /** R, S, D, Z (zombie), X (dead), T, t, I, ... */
  readonly state: string;
  readonly parentPid: number;
  readonly processGroup: number;
  readonly session: number;
  /** Field 22, in clock ticks after boot: with the pid, identifies one process across pid reuse. */
  readonly startTime: number;
  /** Fields 14 + 15 (utime + stime): the CPU the process has used, all its threads, in clock ticks. */
  readonly cpuTicks: number;
  /** Fields 16 + 17 (cutime + cstime): the CPU of the children it has waited for, in clock ticks. */
  readonly waitedChildrenCpuTicks: number;
}

const procRoot = '/proc';
let available: boolean | undefined;

/** Whether this system has a Linux-style /proc to read (checked once). */
export function hasProcFilesystem(): boolean {
  if (available === undefined) {
    try {
      available = parseProcessStat(readFileSync(`${procRoot}/self/stat`, 'utf8')) !== undefined;
    } catch {
      available = false;
    }
  }
  return available;
}

/**
 * Parses one /proc/<pid>/stat line. The comm field sits in parentheses and may itself contain
 * ") (" or spaces, so the fixed fields are read after the LAST ")".
 */
export function parseProcessStat(text: string): ProcessStatus | undefined {
  const open = text.indexOf(' (');
  const close = text.lastIndexOf(')');
  if (open <= 0 || close < open) return undefined;
  const pid = Number(text.slice(0, open));
  // After ") ": state is field 3, so field N is at index N - 3.
  const fields = text
    .slice(close + 2)
    .trim()
    .split(' ');
  const state = fields[0];
  const numbers = [fields[1], fields[2], fields[3], fields[19], fields[11], fields[12], fields[13], fields[14]].map(
    (field) => (field === undefined || !/^-?\d+$/.test(field) ? Number.NaN : Number(field)),
  );
  const [parentPid, processGroup, session, startTime, userTicks, systemTicks, childrenUserTicks, childrenSystemTicks] =
    numbers as [number, number, number, number, number, number, number, number];
  if (!Number.isInteger(pid) || pid <= 0 || state === undefined || state.length !== 1 || numbers.some(Number.isNaN))
    return undefined;
  return {
    pid,
    command: text.slice(open + 2, close),
    state,
    parentPid,
    processGroup,
    session,
    startTime,
    cpuTicks: userTicks + systemTicks,
    waitedChildrenCpuTicks: childrenUserTicks + childrenSystemTicks,
  };
}

/** The process's status, or undefined when it does not exist (or there is no /proc). */
export function readProcessStatus(pid: number): ProcessStatus | undefined {
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  try {
    return parseProcessStat(readFileSync(`${procRoot}/${pid}/stat`, 'utf8'));
  } catch {
    return undefined;
  }
}

/**
 * Whether the process was started with no environment at all (env -i), from env_start and env_end
 * in its stat (fields 50 and 51, Linux 3.5+): equal and not zero. During an execve env_end is mostly
 * still 0 while the environment already reads empty, but not always (3 of ~2,300 empty reads of a
 * shell exec'ing itself said "equal, not zero"): one look at it alone is no proof (find-processes.ts).
 */
export function startedWithoutEnvironment(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  let text: string;
  try {
    text = readFileSync(`${procRoot}/${pid}/stat`, 'utf8');
  } catch {
    return false;
  }
  // After the last ") ", field N is at index N - 3.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const [start, end] = [fields[47], fields[48]];
  return end !== undefined && end !== '0' && start === end;
}

/**
 * The environment the process was started with (NAME=value entries), or undefined when it is
 * gone, not ours to read, or there is no /proc. A process's later setenv calls are not seen;
 * what it passes on to its children is, in their own entries.
 */
export function readProcessEnvironment(pid: number): string[] | undefined {
  const raw = readRawEnvironment(pid);
  if (raw === undefined) return undefined;
  return raw
    .toString('utf8')
    .split('\0')
    .filter((entry) => entry.length > 0);
}

/**
 * Whether the process's environment holds exactly `entry` (NAME=value) as one variable;
 * undefined when it cannot be read. Searches the raw bytes: scanning every process stays cheap.
 */
export function environmentIncludes(pid: number, entry: string): boolean | undefined {
  const found = lookUpEnvironmentEntry(pid, entry);
  return found === undefined ? undefined : found === 'present';
}

/**
 * environmentIncludes, telling an environment that read as nothing apart: a process in the middle
 * of an execve reads so (Linux fills in the new image's environment only after mapping it), as
 * does one started with none (env -i), so only a second look tells them apart.
 */
export function lookUpEnvironmentEntry(pid: number, entry: string): 'present' | 'absent' | 'empty' | undefined {
  const raw = readRawEnvironment(pid);
  if (raw === undefined) return undefined;
  if (raw.length === 0) return 'empty';
  const needle = Buffer.from(entry, 'utf8');
  for (let at = raw.indexOf(needle); at !== -1; at = raw.indexOf(needle, at + 1)) {
    const startsEntry = at === 0 || raw[at - 1] === 0;
    const end = at + needle.length;
    const endsEntry = end === raw.length || raw[end] === 0;
    if (startsEntry && endsEntry) return 'present';
  }
  return 'absent';
}

function readRawEnvironment(pid: number): Buffer | undefined {
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  try {
    return readFileSync(`${procRoot}/${pid}/environ`);
  } catch {
    return undefined;
  }
}

/** The process's command line (argv), or undefined when it is gone or there is no /proc. */
export function readProcessCommandLine(pid: number): string[] | undefined {
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  try {
    // Every argument ends with a NUL, so the last piece of the split is the empty rest.
    return readFileSync(`${procRoot}/${pid}/cmdline`, 'utf8').split('\0').slice(0, -1);
  } catch {
    return undefined;
  }
}

/** Every pid in /proc (processes, not threads); empty without /proc. */
export function listProcessIds(): number[] {
  try {
    return readdirSync(procRoot)
      .filter((entry) => /^\d+$/.test(entry))
      .map(Number);
  } catch {
    return [];
  }
}

/**
 * Whether the process still runs. A zombie (Z) or dead (X) entry has finished: it only waits for
 * its parent to collect it. Without /proc this asks the kernel with signal 0, which cannot tell
 * a zombie from a live process. The check for the agents' processes (supervision, and through the
 * test-support export the tests and the benchmark); whether a data directory's owner (a runtime, the
 * daemon) runs is the store's lock's question (store-sqlite's data-directory-lock.ts says why apart).
 */
export function isAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  if (hasProcFilesystem()) {
    const status = readProcessStatus(pid);
    return status !== undefined && status.state !== 'Z' && status.state !== 'X';
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
