/**
 * What the benchmark measures of processes and of the machine: CPU time, memory, load. Finding and
 * reading processes (stat, environment, command line, descendants, liveness) is provider-claude's:
 * the same /proc readers supervision uses, through its test-support export. Only readings no
 * supervision needs (/proc/<pid>/status memory and threads, /proc/stat, /proc/loadavg) stay here.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import {
  isAlive,
  readProcessCommandLine,
  readProcessEnvironment,
  readProcessStatus,
  snapshotDescendants,
  processesWithEnvironment as processIdsWithEnvironment,
} from '@tether/provider-claude/test-support';

export { isAlive };

let ticksPerSecond = 100;
try {
  ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
} catch {
  // 100 is the Linux default.
}

/** Clock ticks (/proc's unit of CPU time) in ms. */
export const ticksToMs = (ticks) => (ticks * 1000) / ticksPerSecond;

/** utime + stime of a live process (all its threads), in ms; NaN once it is gone. */
export function processCpuMs(pid) {
  const status = readProcessStatus(pid);
  return status === undefined ? NaN : ticksToMs(status.cpuTicks);
}

/** The given pids as [{ pid, comm }], leaving out any that ended meanwhile. */
function withCommands(pids) {
  return pids.flatMap((pid) => {
    const status = readProcessStatus(pid);
    return status === undefined ? [] : [{ pid, comm: status.command }];
  });
}

/** Live descendants of a process (children, grandchildren, ...), by parent-pid walk: [{ pid, comm }]. */
export function descendantsOf(rootPid) {
  return withCommands(snapshotDescendants(rootPid).map(({ pid }) => pid));
}

/** Live direct children of a process: [{ pid, comm }]. */
export function childrenOf(parentPid) {
  return descendantsOf(parentPid).filter(({ pid }) => readProcessStatus(pid)?.parentPid === parentPid);
}

/**
 * The host's children that are agents (claude, the fake API aside): a Tether host's exit watch, a
 * `/bin/sh` started with its first agent (docs/decisions/2026-12-06-a-killed-hosts-agents-end-with-it.md), is not one.
 */
export function agentChildrenOf(parentPid, apiPid) {
  return childrenOf(parentPid).filter(({ pid }) => pid !== apiPid && commandLine(pid)?.[0] !== '/bin/sh');
}

/** argv of a live process; null once it is gone. */
export function commandLine(pid) {
  return readProcessCommandLine(pid) ?? null;
}

/** Environment of a live process (same user only) as an object; null once it is gone. */
export function environmentOf(pid) {
  const entries = readProcessEnvironment(pid);
  return entries === undefined
    ? null
    : Object.fromEntries(
        entries.map((entry) => [entry.slice(0, entry.indexOf('=')), entry.slice(entry.indexOf('=') + 1)]),
      );
}

/** Live processes (not zombies) whose environment has `name=value`: [{ pid, comm }]. */
export function processesWithEnvironment(name, value) {
  return withCommands(processIdsWithEnvironment(name, value));
}

/** This process's CPU time (user + system, all threads), in ms. */
export function selfCpuMs() {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

/** CPU time used by everything on the machine (all cores, idle and iowait excluded), in ms. */
export function machineBusyMs() {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0].trim().split(/\s+/).slice(1).map(Number);
    const [user, nice, system, , , irq, softirq, steal] = fields;
    return ticksToMs(user + nice + system + irq + softirq + (steal ?? 0));
  } catch {
    return NaN;
  }
}

/** The 1-minute load average. */
export function loadAverage() {
  try {
    return Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);
  } catch {
    return NaN;
  }
}

/** /proc/<pid>/status, or undefined once the process is gone. */
function statusText(pid) {
  try {
    return readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return undefined;
  }
}

/** VmRSS and VmHWM (KiB) of a live process; NaN when gone. */
export function memoryOf(pid = 'self') {
  const text = statusText(pid);
  const kib = (name) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(text ?? '')?.[1] ?? NaN);
  return { rssKb: kib('VmRSS'), hwmKb: kib('VmHWM') };
}

/** Resident set size of a live process (VmRSS), in KiB; NaN once it is gone. */
export function rssKb(pid = 'self') {
  return memoryOf(pid).rssKb;
}

/**
 * CPU of a process and of everything under it, in ms: `ownMs` its own threads; `descendantsMs` the
 * children it has reaped (cutime and cstime, with what they reaped) plus every live descendant.
 * NaN for both once the process is gone.
 */
export function processTreeCpuMs(pid) {
  const root = readProcessStatus(pid);
  if (root === undefined) return { ownMs: NaN, descendantsMs: NaN };
  let descendantsMs = ticksToMs(root.waitedChildrenCpuTicks);
  for (const { pid: descendant } of snapshotDescendants(pid)) descendantsMs += processCpuMs(descendant) || 0;
  return { ownMs: ticksToMs(root.cpuTicks), descendantsMs };
}

/** CPU of this process tree, in ms. The machine's busy time minus this is other people's work. */
export function treeCpuMs() {
  const { ownMs, descendantsMs } = processTreeCpuMs(process.pid);
  return ownMs + descendantsMs;
}

/** Number of open file descriptors of this process. */
export function openFdCount() {
  try {
    return readdirSync('/proc/self/fd').length;
  } catch {
    return NaN;
  }
}

/**
 * Whether every thread of a process has exited. The leader thread of a multi-threaded program can
 * be a zombie while its other threads still run (the claude binary's main thread ends first), so
 * a zombie leader alone does not mean the process is gone: its thread count must be down to 1.
 */
export function processFinished(pid) {
  const status = statusText(pid);
  if (status === undefined) return true;
  const state = /^State:\s+(\S)/m.exec(status)?.[1];
  const threads = Number(/^Threads:\s+(\d+)/m.exec(status)?.[1] ?? 1);
  return (state === 'Z' || state === 'X') && threads <= 1;
}
