// Where a command's CPU goes, by kind of process (Linux only; after a build: it reads /proc as the
// benchmark does, bench/lib/proc.mjs): runs the command (by default the whole test suite, `npm test`),
// reads every process's CPU while it runs, and prints the CPU-seconds and process counts of each kind,
// with what the whole machine used. DEVELOPERS.md ("Where the suite's time goes") records what it found.
//   ./dev node tools/suite-cpu.mjs                        the whole suite
//   ./dev node tools/suite-cpu.mjs npx vitest run tests/acp   any other command
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import os from 'node:os';
import { readProcessStatus } from '@tether/provider-claude/test-support';
import { commandLine, machineBusyMs, ticksToMs } from '../bench/lib/proc.mjs';

const command = process.argv.length > 2 ? process.argv.slice(2) : ['npm', 'test'];
// Often enough to see most processes alive (a claude lives ~1 s). What one used after its last read is
// missed, and so is one that starts and ends between two reads (git, sh): the "not seen" line.
const readEveryMs = 200;

/**
 * Every process seen, by pid and start time (pids are reused): its kind, from its first read, and its
 * CPU since the command started (what one running before then had used is left out).
 */
const processes = new Map();

function kindOf(pid) {
  const argv = commandLine(pid);
  if (argv === null || argv.length === 0) return 'kernel, or gone before it was read';
  const name = argv[0].split('/').pop();
  if (name !== 'node') return name;
  const script = argv.slice(1).find((argument) => !argument.startsWith('-')) ?? '';
  if (argv.some((argument) => argument.includes('--experimental-import-meta-resolve'))) return 'node: vitest worker';
  if (/tether\.js$|bundle\/bin\.js$/.test(script)) {
    const subcommand = argv.slice(argv.indexOf(script) + 1).find((argument) => !argument.startsWith('-'));
    return `node: tether ${subcommand ?? ''}`.trim();
  }
  return `node: ${script.split('/').slice(-2).join('/') || argv.slice(1, 3).join(' ')}`;
}

function readProcesses(before = false) {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    const status = readProcessStatus(Number(entry));
    if (status === undefined) continue;
    const key = `${entry}:${status.startTime}`;
    let seen = processes.get(key);
    if (!seen) {
      seen = { kind: kindOf(Number(entry)), cpuMs: 0, beforeMs: 0 };
      processes.set(key, seen);
    }
    const cpuMs = ticksToMs(status.cpuTicks);
    if (before) seen.beforeMs = cpuMs;
    seen.cpuMs = cpuMs - seen.beforeMs;
  }
}

readProcesses(true);
const busyBefore = machineBusyMs();
const started = Date.now();
const reading = setInterval(readProcesses, readEveryMs);
const child = spawn(command[0], command.slice(1), { stdio: ['ignore', 'inherit', 'inherit'] });
// A signal to this tool reaches the command too (a terminal's Ctrl-C reaches both already).
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
const exitCode = await new Promise((resolve) => {
  child.on('error', (error) => {
    console.error(`${command[0]} could not be started: ${error.message}`);
    resolve(127);
  });
  child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
});
clearInterval(reading);
readProcesses();
const busyMs = machineBusyMs() - busyBefore;
const wallMs = Date.now() - started;

const kinds = new Map();
for (const { kind, cpuMs } of processes.values()) {
  const row = kinds.get(kind) ?? { count: 0, cpuMs: 0 };
  row.count += 1;
  row.cpuMs += cpuMs;
  kinds.set(kind, row);
}
const seconds = (ms) => (ms / 1000).toFixed(0).padStart(5);
const cores = os.availableParallelism();
console.log(`\n${command.join(' ')}: exit ${exitCode}, ${(wallMs / 1000).toFixed(0)} s`);
console.log(
  `machine: ${seconds(busyMs).trim()} CPU-s used of ${seconds(wallMs * cores).trim()} (${cores} cores; all processes, not only the command's)`,
);
console.log('CPU-s  processes  kind');
for (const [kind, row] of [...kinds].sort((a, b) => b[1].cpuMs - a[1].cpuMs)) {
  if (row.cpuMs < 1000) continue;
  console.log(`${seconds(row.cpuMs)}  ${String(row.count).padStart(9)}  ${kind}`);
}
const seenMs = [...kinds.values()].reduce((sum, row) => sum + row.cpuMs, 0);
console.log(`${seconds(Math.max(0, busyMs - seenMs))}             not seen (between two reads, or the kernel's own)`);
process.exitCode = exitCode;
