#!/usr/bin/env node
// Tether benchmark: the same scripted turn (2,000 text deltas from the fake API) driven (a) by a
// minimal raw loop over the claude CLI and (b) through Tether (translate + persist + publish to
// one subscriber), interleaved; plus events/second through the store alone. It reports; it does
// not fail the build (exit 0 whatever the ratio, non-zero only when something is broken).
//
// Usage: ./dev npm run bench      or   ./dev node bench/run-benchmarks.mjs [--repetitions N] [--deltas N]
import { spawn, spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { baseEnvironment, findClaudeBinary, rawLaunch } from './lib/claude-setup.mjs';
import { runRawTurn } from './lib/raw-loop.mjs';
import { loadAverage } from './lib/proc.mjs';
import { median, round, summarize } from './lib/stats.mjs';
import { measureRuntimeMock, measureStoreDirect } from './lib/store-throughput.mjs';
import { runTetherTurn } from './lib/tether-turn.mjs';

const repoRoot = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const target = 1.05;
/** A pair counts as quiet when the rest of the machine used less than this many cores during both legs. */
const quietCores = 0.15;
const prompt = 'Reply with the scripted text.';

function parseArguments(argv) {
  const options = { repetitions: 10, deltas: 2000, output: path.join(repoRoot, '.bench-results', 'latest.json'), store: true };
  for (let index = 0; index < argv.length; index += 1) {
    const flag = argv[index];
    const value = () => {
      const next = argv[++index];
      if (next === undefined) throw new Error(`${flag} needs a value`);
      return next;
    };
    if (flag === '--repetitions' || flag === '-n') options.repetitions = Number(value());
    else if (flag.startsWith('--repetitions=')) options.repetitions = Number(flag.split('=')[1]);
    else if (flag === '--deltas') options.deltas = Number(value());
    else if (flag === '--output') options.output = path.resolve(value());
    else if (flag === '--no-store') options.store = false;
    else if (flag === '--help' || flag === '-h') {
      console.log('usage: node bench/run-benchmarks.mjs [--repetitions N (default 10)] [--deltas N (default 2000)] [--output file] [--no-store]');
      process.exit(0);
    } else throw new Error(`unknown argument ${flag}`);
  }
  if (!Number.isInteger(options.repetitions) || options.repetitions < 1) throw new Error('--repetitions must be a positive integer');
  if (!Number.isInteger(options.deltas) || options.deltas < 1) throw new Error('--deltas must be a positive integer');
  return options;
}

/** The fake API in its own process; resolves once it printed its URL. */
async function startFakeApiProcess(deltas) {
  const child = spawn(process.execPath, [path.join(repoRoot, 'bench', 'fake-api-server.mjs')], {
    cwd: repoRoot,
    env: { ...process.env, BENCH_DELTAS: String(deltas) },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const info = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the fake API process did not report its URL within 15 s')), 15_000);
    child.once('error', (error) => reject(new Error(`could not start the fake API process: ${error.message}`)));
    child.once('exit', (code) => reject(new Error(`the fake API process exited early (code ${code})`)));
    createInterface({ input: child.stdout }).once('line', (line) => {
      clearTimeout(timer);
      resolve(JSON.parse(line));
    });
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return {
    ...info,
    async stop() {
      child.stdin.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

function claudeVersion(claudePath, environment) {
  const result = spawnSync(claudePath, ['--version'], { env: environment, encoding: 'utf8', timeout: 20_000 });
  return (result.stdout ?? '').trim() || 'unknown';
}

/** Tether's real child launch (read from /proc) against the raw loop's, session id aside. */
function compareLaunch(launch, environment) {
  if (!launch?.argv) return { checked: false, note: 'could not read the Tether child launch from /proc' };
  const raw = rawLaunch({ environment, providerSessionId: 'x' });
  const normalise = (argv) => argv.map((value, index) => (argv[index - 1] === '--session-id' ? '<uuid>' : value));
  const tetherArgv = normalise(launch.argv.slice(1));
  const rawArgv = normalise(raw.argv);
  const differences = [];
  if (JSON.stringify(tetherArgv) !== JSON.stringify(rawArgv)) differences.push(`argv: tether ${JSON.stringify(tetherArgv)} vs raw ${JSON.stringify(rawArgv)}`);
  if (launch.env) {
    const names = new Set([...Object.keys(launch.env), ...Object.keys(raw.env)]);
    for (const name of names) {
      if (launch.env[name] !== raw.env[name]) differences.push(`env ${name}: tether ${JSON.stringify(launch.env[name])} vs raw ${JSON.stringify(raw.env[name])}`);
    }
  }
  return { checked: true, identical: differences.length === 0, differences, argv: rawArgv };
}

function pairedRatios(pairs, key) {
  return pairs.map((pair) => pair.tether[key] / pair.raw[key]);
}

function fmt(value, digits = 0) {
  if (!Number.isFinite(value)) return 'n/a';
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

function pad(text, width, right = false) {
  const string = String(text);
  return right ? string.padStart(width) : string.padEnd(width);
}

function printTable(report) {
  const { turn, firstDelta, cpu, machine, options } = report;
  const lines = [];
  lines.push('');
  lines.push(`Tether benchmark  ${report.date}`);
  lines.push(`  machine: ${machine.cpus} x ${machine.cpuModel}, ${machine.platform}; node ${machine.node}; claude ${machine.claude}`);
  lines.push(`  scenario: one turn of ${options.deltas} text deltas, cold spawn each time; ${options.repetitions} interleaved repetitions (+1 warm-up pair)`);
  lines.push(`  launch parity (Tether's child argv+env vs the raw loop's): ${report.launchParity.checked ? (report.launchParity.identical ? 'identical' : 'DIFFERENT') : report.launchParity.note}`);
  lines.push('');
  const header = `  ${pad('', 30)}${pad('raw loop (a)', 14, true)}${pad('Tether (b)', 14, true)}${pad('b/a median', 12, true)}${pad('IQR', 16, true)}${pad('min-max', 16, true)}${pad('target', 9, true)}`;
  lines.push(header);
  const row = (label, stats) =>
    `  ${pad(label, 30)}${pad(fmt(stats.raw.median), 14, true)}${pad(fmt(stats.tether.median), 14, true)}${pad(fmt(stats.ratio.median, 3), 12, true)}${pad(`${fmt(stats.ratio.p25, 3)}-${fmt(stats.ratio.p75, 3)}`, 16, true)}${pad(`${fmt(stats.ratio.min, 3)}-${fmt(stats.ratio.max, 3)}`, 16, true)}${pad(stats.ratio.median <= target ? '<=1.05 ok' : '>1.05 MISS', 12, true)}`;
  lines.push(row('turn time, ms (median)', turn));
  lines.push(row('cold spawn -> first delta, ms', firstDelta));
  if (report.quiet.turn) {
    lines.push(row(`  quiet pairs only (${report.quiet.pairs}): turn`, report.quiet.turn));
    lines.push(row(`  quiet pairs only (${report.quiet.pairs}): first`, report.quiet.firstDelta));
  } else {
    lines.push(`  (only ${report.quiet.pairs} quiet pair(s): too few for a quiet-only line)`);
  }
  lines.push(`  other load on the machine during the legs: median ${fmt(report.otherLoadCores.median, 2)} cores, max ${fmt(report.otherLoadCores.max, 2)} (quiet = < ${report.quiet.thresholdCores}); load average ${fmt(report.loadAverage.start, 2)} -> ${fmt(report.loadAverage.end, 2)}`);
  lines.push('');
  lines.push(`  ${pad('bench process CPU / 1k deltas', 30)}${pad(`${fmt(cpu.benchPer1k.raw, 1)} ms`, 14, true)}${pad(`${fmt(cpu.benchPer1k.tether, 1)} ms`, 14, true)}   Tether's own overhead ~${fmt(cpu.tetherOverheadPer1k, 1)} ms CPU / 1k deltas (paired median)`);
  lines.push(`  ${pad('claude CPU per turn', 30)}${pad(`${fmt(cpu.claude.raw)} ms`, 14, true)}${pad(`${fmt(cpu.claude.tether)} ms`, 14, true)}`);
  lines.push(`  ${pad('fake API CPU per turn', 30)}${pad(`${fmt(cpu.api.raw)} ms`, 14, true)}${pad(`${fmt(cpu.api.tether)} ms`, 14, true)}`);
  lines.push(`  ${pad('deltas seen / events delivered', 30)}${pad(fmt(report.counts.rawDeltas), 14, true)}${pad(`${fmt(report.counts.tetherDeltas)} / ${fmt(report.counts.tetherDelivered)}`, 14, true)}`);
  lines.push(`  ${pad('Tether commits per turn', 30)}${pad('', 14)}${pad(fmt(report.writer.commits), 14, true)}   median batch ${fmt(report.writer.medianBatch)} event(s), mean ${fmt(report.writer.meanBatch, 1)}; ${fmt(report.writer.commitMs, 1)} ms in store.commit per turn`);
  if (report.store) {
    lines.push('');
    lines.push(`  Store alone (${options.deltas} run.message_delta events, SQLite in a temp dir)`);
    lines.push(`    store.commit, events + session row per batch:  ${report.store.direct.map((entry) => `batch ${entry.batchSize}: ${fmt(entry.eventsPerSecond)} ev/s`).join('; ')}`);
    lines.push(`    runtime + mock provider -> 1 subscriber:       ${report.store.runtime.map((entry) => `${entry.variant}: ${fmt(entry.eventsPerSecond)} ev/s (${fmt(entry.turnMs, 1)} ms)`).join('; ')}`);
  }
  lines.push('');
  lines.push(`  targets: turn time b/a <= ${target}: ${turn.ratio.median <= target ? 'met' : 'missed'}; cold first delta b/a <= ${target}: ${firstDelta.ratio.median <= target ? 'met' : 'missed'}`);
  lines.push(`  results: ${path.relative(repoRoot, options.output)}`);
  console.log(lines.join('\n'));
}

async function main() {
  const options = parseArguments(process.argv.slice(2));
  const binary = findClaudeBinary();
  if (!binary.path) {
    console.error(`bench: ${binary.reason}`);
    process.exitCode = 2;
    return;
  }
  const claudePath = binary.path;
  const started = Date.now();
  const root = await realpath(await mkdtemp(path.join(os.tmpdir(), 'tether-bench-')));
  const workspace = path.join(root, 'workspace');
  await mkdir(workspace);
  let api;
  try {
    api = await startFakeApiProcess(options.deltas);
    const environment = await baseEnvironment({ root, apiUrl: api.url });
    const loadAtStart = loadAverage();
    const common = { claudePath, environment, workspace, prompt, apiPid: api.pid };
    const machine = {
      cpus: os.cpus().length,
      cpuModel: os.cpus()[0]?.model ?? 'unknown',
      platform: `${os.platform()} ${os.release()}`,
      node: process.version,
      claude: claudeVersion(claudePath, environment),
      totalMemoryGb: round(os.totalmem() / 2 ** 30, 1),
    };
    console.log(`bench: claude ${machine.claude} at ${claudePath}; fake API (pid ${api.pid}) at ${api.url}`);

    // Warm-up pair (not counted): fills the OS page cache, the CLI's HOME, Node's JIT.
    const warmRaw = await runRawTurn(common);
    const warmTether = await runTetherTurn({ ...common, inspectChild: true });
    const launchParity = compareLaunch(warmTether.launch, environment);
    console.log(`bench: warm-up raw ${fmt(warmRaw.turnMs)} ms, Tether ${fmt(warmTether.turnMs)} ms; launch parity: ${launchParity.identical ? 'identical' : JSON.stringify(launchParity.differences ?? launchParity.note)}`);

    const pairs = [];
    for (let repetition = 0; repetition < options.repetitions; repetition += 1) {
      const order = repetition % 2 === 0 ? ['raw', 'tether'] : ['tether', 'raw'];
      const pair = { repetition: repetition + 1, order: order.join(',') };
      for (const leg of order) pair[leg] = leg === 'raw' ? await runRawTurn(common) : await runTetherTurn(common);
      delete pair.tether.launch;
      pair.turnRatio = pair.tether.turnMs / pair.raw.turnMs;
      pair.firstDeltaRatio = pair.tether.firstDeltaMs / pair.raw.firstDeltaMs;
      pair.foreignCores = Math.max(pair.raw.foreignCpuMs / pair.raw.turnMs, pair.tether.foreignCpuMs / pair.tether.turnMs);
      pair.quiet = pair.foreignCores < quietCores;
      pairs.push(pair);
      console.log(
        `bench: #${pair.repetition} (${pair.order}) turn raw ${fmt(pair.raw.turnMs)} / Tether ${fmt(pair.tether.turnMs)} ms = ${fmt(pair.turnRatio, 3)}; ` +
          `first delta ${fmt(pair.raw.firstDeltaMs)} / ${fmt(pair.tether.firstDeltaMs)} ms = ${fmt(pair.firstDeltaRatio, 3)}; ` +
          `bench CPU ${fmt(pair.raw.cpuMs)} / ${fmt(pair.tether.cpuMs)} ms; Tether ${pair.tether.commits} commits; other load ${fmt(pair.foreignCores, 2)} cores`,
      );
    }

    const legStats = (key, from = pairs) => ({
      raw: summarize(from.map((pair) => pair.raw[key])),
      tether: summarize(from.map((pair) => pair.tether[key])),
      ratio: summarize(pairedRatios(from, key)),
    });
    const quietPairs = pairs.filter((pair) => pair.quiet);
    const per1k = (leg) => pairs.map((pair) => (pair[leg].cpuMs / Math.max(1, pair[leg].deltas)) * 1000);
    const allBatches = pairs.flatMap((pair) => pair.tether.batchSizes);
    const report = {
      date: new Date().toISOString(),
      options: { repetitions: options.repetitions, deltas: options.deltas, output: options.output },
      machine,
      claudePath,
      launchParity,
      turn: legStats('turnMs'),
      firstDelta: legStats('firstDeltaMs'),
      quiet: {
        thresholdCores: quietCores,
        pairs: quietPairs.length,
        turn: quietPairs.length >= 3 ? legStats('turnMs', quietPairs) : null,
        firstDelta: quietPairs.length >= 3 ? legStats('firstDeltaMs', quietPairs) : null,
      },
      otherLoadCores: summarize(pairs.map((pair) => pair.foreignCores)),
      loadAverage: { start: loadAtStart, end: loadAverage() },
      cpu: {
        benchPer1k: { raw: median(per1k('raw')), tether: median(per1k('tether')) },
        tetherOverheadPer1k: median(pairs.map((pair, index) => per1k('tether')[index] - per1k('raw')[index])),
        claude: { raw: median(pairs.map((pair) => pair.raw.childCpuMs)), tether: median(pairs.map((pair) => pair.tether.childCpuMs)) },
        api: { raw: median(pairs.map((pair) => pair.raw.apiCpuMs)), tether: median(pairs.map((pair) => pair.tether.apiCpuMs)) },
      },
      counts: {
        rawDeltas: median(pairs.map((pair) => pair.raw.deltas)),
        tetherDeltas: median(pairs.map((pair) => pair.tether.deltas)),
        tetherDelivered: median(pairs.map((pair) => pair.tether.delivered)),
        tetherEventTypes: pairs[0]?.tether.types,
        tetherDiagnostics: [...new Set(pairs.flatMap((pair) => pair.tether.diagnostics))],
      },
      writer: {
        commits: median(pairs.map((pair) => pair.tether.commits)),
        medianBatch: median(allBatches),
        meanBatch: allBatches.reduce((sum, size) => sum + size, 0) / Math.max(1, allBatches.length),
        commitMs: median(pairs.map((pair) => pair.tether.commitMs)),
      },
      store: null,
      pairs: pairs.map((pair) => ({ ...pair, tether: { ...pair.tether, batchSizes: undefined } })),
      warmUp: { raw: warmRaw, tether: { ...warmTether, launch: undefined, batchSizes: undefined } },
    };

    if (options.store) {
      report.store = {
        direct: await measureStoreDirect({ deltas: options.deltas }),
        runtime: await measureRuntimeMock({ deltas: options.deltas }),
      };
    }
    report.durationSeconds = round((Date.now() - started) / 1000, 1);
    await mkdir(path.dirname(options.output), { recursive: true });
    await writeFile(options.output, `${JSON.stringify(report, null, 2)}\n`);
    printTable(report);
    console.log(`  took ${report.durationSeconds} s`);
  } finally {
    await api?.stop();
    await rm(root, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(`bench: failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  process.exitCode = 1;
});
