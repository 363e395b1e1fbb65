/** Linux /proc readings: CPU time of another process, and this process's children. */
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';

let ticksPerSecond = 100;
try {
  ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
} catch {
  // 100 is the Linux default.
}

function statFields(pid) {
  const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) is in parentheses and may contain spaces: split after it.
  const close = text.lastIndexOf(')');
  return { comm: text.slice(text.indexOf('(') + 1, close), rest: text.slice(close + 2).split(' ') };
}

/** utime + stime of a live process (all its threads), in ms; NaN once it is gone. */
export function processCpuMs(pid) {
  try {
    const { rest } = statFields(pid);
    // rest[0] is field 3 (state); utime is field 14, stime field 15.
    return ((Number(rest[11]) + Number(rest[12])) * 1000) / ticksPerSecond;
  } catch {
    return NaN;
  }
}

/** Live direct children of a process: [{ pid, comm }]. */
export function childrenOf(parentPid) {
  const children = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const { comm, rest } = statFields(name);
      if (Number(rest[1]) === parentPid) children.push({ pid: Number(name), comm });
    } catch {
      // Exited while we looked.
    }
  }
  return children;
}

/** argv of a live process. */
export function commandLine(pid) {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').slice(0, -1);
  } catch {
    return null;
  }
}

/** Environment of a live process (same user only). */
export function environmentOf(pid) {
  try {
    const entries = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(Boolean);
    return Object.fromEntries(entries.map((entry) => [entry.slice(0, entry.indexOf('=')), entry.slice(entry.indexOf('=') + 1)]));
  } catch {
    return null;
  }
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
    return ((user + nice + system + irq + softirq + (steal ?? 0)) * 1000) / ticksPerSecond;
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

/** Resident set size of a live process (VmRSS), in KiB; NaN once it is gone. */
export function rssKb(pid = 'self') {
  try {
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) : NaN;
  } catch {
    return NaN;
  }
}

/** Live descendants of a process (children, grandchildren, ...), by parent-pid walk: [{ pid, comm }]. */
export function descendantsOf(rootPid) {
  const byParent = new Map();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const { comm, rest } = statFields(name);
      if (rest[0] === 'Z' || rest[0] === 'X') continue;
      const parent = Number(rest[1]);
      const siblings = byParent.get(parent) ?? [];
      siblings.push({ pid: Number(name), comm });
      byParent.set(parent, siblings);
    } catch {
      // Exited while we looked.
    }
  }
  const found = [];
  const queue = [rootPid];
  while (queue.length > 0) {
    for (const child of byParent.get(queue.shift()) ?? []) {
      found.push(child);
      queue.push(child.pid);
    }
  }
  return found;
}

/**
 * CPU of this process tree, in ms: this process (with the children it has reaped: cutime and
 * cstime) plus every live descendant. The machine's busy time minus this is other people's work.
 */
export function treeCpuMs() {
  let total = NaN;
  try {
    const { rest } = statFields('self');
    total = ((Number(rest[11]) + Number(rest[12]) + Number(rest[13]) + Number(rest[14])) * 1000) / ticksPerSecond;
  } catch {
    return NaN;
  }
  for (const { pid } of descendantsOf(process.pid)) total += processCpuMs(pid) || 0;
  return total;
}

/** Number of open file descriptors of this process. */
export function openFdCount() {
  try {
    return readdirSync('/proc/self/fd').length;
  } catch {
    return NaN;
  }
}

/** Live processes (not zombies) whose environment has `name=value`: [{ pid, comm }]. */
export function processesWithEnvironment(name, value) {
  const wanted = `${name}=${value}`;
  const found = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const { comm, rest } = statFields(entry);
      if (rest[0] === 'Z' || rest[0] === 'X') continue;
      if (readFileSync(`/proc/${entry}/environ`, 'utf8').split('\0').includes(wanted)) found.push({ pid: Number(entry), comm });
    } catch {
      // Exited, or not ours to read.
    }
  }
  return found;
}

/** Whether a pid is a live process (a zombie counts as gone). */
export function isAlive(pid) {
  try {
    const { rest } = statFields(pid);
    return rest[0] !== 'Z' && rest[0] !== 'X';
  } catch {
    return false;
  }
}

/**
 * Whether every thread of a process has exited. The leader thread of a multi-threaded program can
 * be a zombie while its other threads still run (the claude binary's main thread ends first), so
 * a zombie leader alone does not mean the process is gone: its thread count must be down to 1.
 */
export function processFinished(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const state = /^State:\s+(\S)/m.exec(status)?.[1];
    const threads = Number(/^Threads:\s+(\d+)/m.exec(status)?.[1] ?? 1);
    return (state === 'Z' || state === 'X') && threads <= 1;
  } catch {
    return true;
  }
}
