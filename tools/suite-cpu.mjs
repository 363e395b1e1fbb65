// Where a command's CPU goes, by kind of process (Linux only): runs the command (by default the whole
// test suite, `npm test`), reads every process's CPU from /proc while it runs, and prints the CPU-seconds
// and process counts of each kind, with the machine's idle time. DEVELOPERS.md ("Where the suite's time
// goes") records what it found.
//   ./dev node tools/suite-cpu.mjs                        the whole suite
//   ./dev node tools/suite-cpu.mjs npx vitest run tests/acp   any other command
import { spawn } from 'node:child_process';
import { readFileSync, readdirSync, readlinkSync } from 'node:fs';

const command = process.argv.length > 2 ? process.argv.slice(2) : ['npm', 'test'];
// Often enough to see most processes alive (a claude lives ~1 s). What one used after its last read is
// missed, and so is one that starts and ends between two reads (git, sh): the "not seen" line.
const readEveryMs = 200;
const ticksPerSecond = 100;

/** Machine-wide CPU time by state, in ticks (/proc/stat's first line; guest time is already in user). */
function machineTicks() {
  const [, ...fields] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/);
  const ticks = fields.slice(0, 8).map(Number);
  return { total: ticks.reduce((sum, value) => sum + value, 0), idle: ticks[3] + ticks[4] };
}

/**
 * Every process seen, by pid and start time (pids are reused): its kind, from its first read, and its
 * CPU since the command started (what one running before then had used is left out).
 */
const processes = new Map();

function kindOf(pid) {
  let executable = '';
  let argv = [];
  try {
    executable = readlinkSync(`/proc/${pid}/exe`);
    argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  } catch {
    return 'kernel, or gone before it was read';
  }
  const name = executable.split('/').pop();
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
    if (!/^\d+$/.test(entry)) continue;
    let stat;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue;
    }
    // The fields after the command name, which may itself hold spaces and parentheses.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const key = `${entry}:${fields[19]}`;
    let seen = processes.get(key);
    if (!seen) {
      if (Number(entry) === process.pid) continue;
      seen = { kind: kindOf(entry), cpu: 0, before: 0 };
      processes.set(key, seen);
    }
    const cpu = (Number(fields[11]) + Number(fields[12])) / ticksPerSecond;
    if (before) seen.before = cpu;
    seen.cpu = cpu - seen.before;
  }
}

readProcesses(true);
const before = machineTicks();
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
const after = machineTicks();

const kinds = new Map();
for (const { kind, cpu } of processes.values()) {
  const row = kinds.get(kind) ?? { count: 0, cpu: 0 };
  row.count += 1;
  row.cpu += cpu;
  kinds.set(kind, row);
}
const seconds = (ticks) => (ticks / ticksPerSecond).toFixed(0);
console.log(`\n${command.join(' ')}: exit ${exitCode}, ${((Date.now() - started) / 1000).toFixed(0)} s`);
console.log(
  `machine: ${seconds(after.total - before.total)} CPU-s, of which idle ${seconds(after.idle - before.idle)} (all processes, not only the command's)`,
);
console.log('CPU-s  processes  kind');
for (const [kind, row] of [...kinds].sort((a, b) => b[1].cpu - a[1].cpu)) {
  if (row.cpu < 1) continue;
  console.log(`${row.cpu.toFixed(0).padStart(5)}  ${String(row.count).padStart(9)}  ${kind}`);
}
const seen = [...kinds.values()].reduce((sum, row) => sum + row.cpu, 0);
const used = (after.total - before.total - (after.idle - before.idle)) / ticksPerSecond;
console.log(
  `${Math.max(0, used - seen)
    .toFixed(0)
    .padStart(5)}             not seen (between two reads, or the kernel's own)`,
);
process.exitCode = exitCode;
