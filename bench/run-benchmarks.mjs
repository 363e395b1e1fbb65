#!/usr/bin/env node
// Tether benchmark: the same scripted turn (2,000 text deltas from the fake API) driven (a) by a
// minimal raw loop over the claude CLI and (b) through Tether (translate + persist + publish to
// one subscriber), interleaved; plus events/second through the store alone; plus the lifecycle
// scenarios (bench/lib/lifecycle.mjs): interrupt latency, close latency, open → first delta
// (cold, warm, warm pool), crash detection, memory per idle open session, and (--soak) 200
// open/turn/close cycles; plus the daemon scenario (bench/lib/daemon-scenario.mjs): 20 concurrent
// turns through `startDaemon` in its own process vs in-process, fan-out to 100 subscribers, daemon
// RSS; plus the transport scenario (bench/lib/transport-comparison.mjs): the main scenario's turns
// through the Claude provider's cli and sdk transports, paired. It reports; it does not fail the
// build (exit 0 whatever the figures; non-zero only when something is broken).
//
// Usage: ./dev npm run bench
//        ./dev node bench/run-benchmarks.mjs [--scenarios LIST] [--soak] [--repetitions N] [--deltas N] [--transport-repetitions N] [--no-store] [--no-wait] [--output file]
import { spawn, spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { baseEnvironment, findClaudeBinary, rawLaunch } from './lib/claude-setup.mjs';
import { loadAverage } from './lib/proc.mjs';
import { waitForQuiet } from './lib/quiet.mjs';
import { runRawTurns } from './lib/raw-loop.mjs';
import { bootstrapMedianInterval, median, quantile, round, summarize } from './lib/stats.mjs';
import { measureRuntimeMock, measureStoreDirect } from './lib/store-throughput.mjs';
import { runTetherTurns } from './lib/tether-turn.mjs';
import { measureCrashes, measureInterrupts, measureLifecycle, measureMemory, measureSoak, warmPoolAvailable } from './lib/lifecycle.mjs';
import { descendantsOf } from './lib/proc.mjs';
import { measureDaemon, summarizeDaemon } from './lib/daemon-scenario.mjs';
import { measureTransports, summarizeTransports } from './lib/transport-comparison.mjs';

const repoRoot = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const target = 1.05;
const prompt = 'Reply with the scripted text.';
/** A pair counts as quiet when the rest of the machine used less than this many cores during each leg. */
const quietCores = 0.15;
/** Before each pair, wait up to this long for the machine to be quiet (the whole bench stays under ~3 min). */
const quietWaitPerPairMs = 8_000;
const quietWaitTotalMs = 60_000;
/** The lifecycle scenarios wait less per pair (their pairs are short), 30 s in all. */
const lifecycleQuietWaitPerPairMs = 3_000;
const lifecycleQuietWaitTotalMs = 30_000;
/** The transport scenario's quiet wait in all (its 8 pairs take ~20 s; with the waits it stays under a minute). */
const transportQuietWaitTotalMs = 15_000;
const allScenarios = ['main', 'interrupt', 'lifecycle', 'crash', 'memory', 'soak', 'transports', 'daemon'];
const defaultScenarios = ['main', 'interrupt', 'lifecycle', 'crash', 'memory', 'transports', 'daemon'];
const usage =
  'usage: node bench/run-benchmarks.mjs [--scenarios main,interrupt,lifecycle,crash,memory,transports,daemon,soak (default: all but soak)] [--soak (adds soak)]\n' +
  '         [--repetitions N (main, default 10)] [--deltas N (main, default 2000)] [--no-store]\n' +
  '         [--lifecycle-repetitions N (interrupt, lifecycle, crash; default 12)] [--sessions N (memory, default 20)] [--soak-cycles N (default 200)]\n' +
  '         [--warm-pool | --no-warm-pool (default: on when the built provider has warmPool)] [--transport-repetitions N (transports, default 8)] [--no-wait] [--output file]\n' +
  '         daemon: [--daemon-sessions N (20)] [--daemon-repetitions N (3)] [--daemon-deltas N (200)] [--subscribers N (100)] [--fanout-deltas N (500)] [--fanout-turns N (3)]\n' +
  '                 [--fanout-paced-ms N (10; 0 = no paced variant)] [--fanout-paced-turns N (1)]';

function parseArguments(argv) {
  const options = {
    repetitions: 10,
    deltas: 2000,
    output: path.join(repoRoot, '.bench-results', 'latest.json'),
    store: true,
    wait: true,
    scenarios: [...defaultScenarios],
    lifecycleRepetitions: 12,
    sessions: 20,
    soakCycles: 200,
    warmPool: undefined,
    transportRepetitions: 8,
    daemonSessions: 20,
    daemonRepetitions: 3,
    daemonDeltas: 200,
    subscribers: 100,
    fanoutDeltas: 500,
    fanoutTurns: 3,
    fanoutPacedMs: 10,
    fanoutPacedTurns: 1,
  };
  for (let index = 0; index < argv.length; index += 1) {
    const [flag, inline] = argv[index].split('=', 2);
    const value = () => {
      const next = inline ?? argv[++index];
      if (next === undefined) throw new Error(`${flag} needs a value`);
      return next;
    };
    if (flag === '--repetitions' || flag === '-n') options.repetitions = Number(value());
    else if (flag === '--deltas') options.deltas = Number(value());
    else if (flag === '--output') options.output = path.resolve(value());
    else if (flag === '--no-store') options.store = false;
    else if (flag === '--no-wait') options.wait = false;
    else if (flag === '--scenarios') options.scenarios = value().split(',').map((name) => name.trim()).filter(Boolean);
    else if (flag === '--soak') options.scenarios = [...new Set([...options.scenarios, 'soak'])];
    else if (flag === '--lifecycle-repetitions') options.lifecycleRepetitions = Number(value());
    else if (flag === '--sessions') options.sessions = Number(value());
    else if (flag === '--soak-cycles') options.soakCycles = Number(value());
    else if (flag === '--warm-pool') options.warmPool = true;
    else if (flag === '--no-warm-pool') options.warmPool = false;
    else if (flag === '--transport-repetitions') options.transportRepetitions = Number(value());
    else if (flag === '--daemon-sessions') options.daemonSessions = Number(value());
    else if (flag === '--daemon-repetitions') options.daemonRepetitions = Number(value());
    else if (flag === '--daemon-deltas') options.daemonDeltas = Number(value());
    else if (flag === '--subscribers') options.subscribers = Number(value());
    else if (flag === '--fanout-deltas') options.fanoutDeltas = Number(value());
    else if (flag === '--fanout-turns') options.fanoutTurns = Number(value());
    else if (flag === '--fanout-paced-ms') options.fanoutPacedMs = Number(value());
    else if (flag === '--fanout-paced-turns') options.fanoutPacedTurns = Number(value());
    else if (flag === '--help' || flag === '-h') {
      console.log(usage);
      process.exit(0);
    } else throw new Error(`unknown argument ${argv[index]}`);
  }
  if (!Number.isInteger(options.repetitions) || options.repetitions < 1) throw new Error('--repetitions must be a positive integer');
  if (!Number.isInteger(options.deltas) || options.deltas < 1) throw new Error('--deltas must be a positive integer');
  for (const name of ['lifecycleRepetitions', 'sessions', 'soakCycles', 'transportRepetitions', 'daemonSessions', 'daemonRepetitions', 'daemonDeltas', 'subscribers', 'fanoutDeltas', 'fanoutTurns']) {
    if (!Number.isInteger(options[name]) || options[name] < 1) throw new Error(`--${name.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`)} must be a positive integer`);
  }
  const unknown = options.scenarios.filter((name) => !allScenarios.includes(name));
  if (unknown.length > 0) throw new Error(`unknown scenario(s) ${unknown.join(', ')}; known: ${allScenarios.join(', ')}`);
  if (!Number.isInteger(options.fanoutPacedMs) || options.fanoutPacedMs < 0 || options.fanoutPacedMs > 9999) throw new Error('--fanout-paced-ms must be an integer from 0 to 9999');
  if (!Number.isInteger(options.fanoutPacedTurns) || options.fanoutPacedTurns < 0) throw new Error('--fanout-paced-turns must be a non-negative integer');
  // The fake API's sized replies are words w0001..w9999.
  if (options.daemonDeltas > 9999 || options.fanoutDeltas > 9999) throw new Error('--daemon-deltas and --fanout-deltas must be at most 9999');
  return options;
}

/** The fake API in its own process; resolves once it printed its URL. */
async function startFakeApiProcess(deltas) {
  const child = spawn(process.execPath, [path.join(repoRoot, 'bench', 'fake-api-server.mjs')], {
    cwd: repoRoot,
    env: { ...process.env, BENCH_DELTAS: String(deltas) },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  try {
    const info = await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the fake API process did not report its URL within 15 s')), 15_000);
      child.once('error', (error) => reject(new Error(`could not start the fake API process: ${error.message}`)));
      child.once('exit', (code) => reject(new Error(`the fake API process exited early (code ${code})`)));
      createInterface({ input: child.stdout }).once('line', (line) => {
        clearTimeout(timer);
        resolve(JSON.parse(line));
      });
    });
    return {
      ...info,
      async stop() {
        child.stdin.end();
        const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
        await exited;
        clearTimeout(timer);
      },
    };
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
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
  const ignored = [];
  if (launch.env) {
    for (const name of new Set([...Object.keys(launch.env), ...Object.keys(raw.env)])) {
      if (launch.env[name] === raw.env[name]) continue;
      // Tether's supervision marker: a random value per process that the CLI never reads.
      if (name === 'TETHER_PROCESS_MARKER' && raw.env[name] === undefined) ignored.push(name);
      else differences.push(`env ${name}: tether ${JSON.stringify(launch.env[name])} vs raw ${JSON.stringify(raw.env[name])}`);
    }
  }
  return { checked: true, identical: differences.length === 0, differences, ignored, argv: rawArgv, environmentNames: Object.keys(raw.env).sort() };
}

function fmt(value, digits = 0) {
  if (!Number.isFinite(value)) return 'n/a';
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

function pad(text, width, right = false) {
  return right ? String(text).padStart(width) : String(text).padEnd(width);
}

function withInterval(stats, values) {
  const interval = bootstrapMedianInterval(values);
  return { ...stats, ci95: [interval.low, interval.high] };
}

/** Per-metric stats over pairs: each leg's distribution and the paired ratios b/a. */
function compare(pairs, pick) {
  const ratios = pairs.map((pair) => pick(pair.tether) / pick(pair.raw));
  return {
    raw: summarize(pairs.map((pair) => pick(pair.raw))),
    tether: summarize(pairs.map((pair) => pick(pair.tether))),
    ratio: withInterval(summarize(ratios), ratios),
  };
}

function metrics(pairs) {
  return {
    coldTurn: compare(pairs, (leg) => leg.turns[0].turnMs),
    coldFirstDelta: compare(pairs, (leg) => leg.turns[0].firstDeltaMs),
    warmTurn: compare(pairs, (leg) => leg.turns[1].turnMs),
    warmFirstDelta: compare(pairs, (leg) => leg.turns[1].firstDeltaMs),
  };
}

function printReport(report) {
  const { machine, options } = report;
  const lines = [];
  lines.push('');
  lines.push(`Tether benchmark  ${report.date}`);
  lines.push(`  machine: ${machine.cpus} x ${machine.cpuModel}, ${machine.platform}; node ${machine.node}; claude ${machine.claude}`);
  lines.push(`  launch parity (Tether's child argv + env, read from /proc, vs the raw loop's): ${report.launchParity.checked ? (report.launchParity.identical ? `identical${report.launchParity.ignored?.length ? ` (apart from ${report.launchParity.ignored.join(', ')}, Tether's random supervision marker)` : ''}` : `DIFFERENT: ${report.launchParity.differences.join('; ')}`) : report.launchParity.note}`);
  if (report.all) lines.push(...mainReportLines(report));
  if (report.lifecycle) lines.push(...lifecycleReportLines(report));
  if (report.transports) lines.push(...transportReportLines(report));
  if (report.daemon) lines.push(...daemonReportLines(report));
  lines.push(`  load average ${fmt(report.loadAverage.start, 2)} -> ${fmt(report.loadAverage.end, 2)}`);
  lines.push(`  details: ${path.relative(process.cwd(), options.output) || options.output}; took ${fmt(report.durationSeconds, 1)} s`);
  console.log(lines.join('\n'));
}

function mainReportLines(report) {
  const { options, all, quiet } = report;
  const lines = [];
  lines.push(`  scenario: ${options.deltas} text deltas per turn from the fake API (own process); per repetition one raw-loop leg and one Tether leg,`);
  lines.push(`            order alternating, each leg = a cold turn (spawn included) then a warm 2nd turn on the same process; ${options.repetitions} repetitions + 1 warm-up pair`);
  lines.push('');
  lines.push(`  ${pad('medians (ms); ratio = Tether/raw, paired', 40)}${pad('raw (a)', 9, true)}${pad('Tether (b)', 12, true)}${pad('b/a', 8, true)}${pad('95% CI', 15, true)}${pad('IQR', 15, true)}${pad('min-max', 15, true)}${pad('target', 9, true)}`);
  const row = (label, stats, withTarget) =>
    `  ${pad(label, 40)}${pad(fmt(stats.raw.median), 9, true)}${pad(fmt(stats.tether.median), 12, true)}${pad(fmt(stats.ratio.median, 3), 8, true)}` +
    `${pad(`${fmt(stats.ratio.ci95[0], 3)}-${fmt(stats.ratio.ci95[1], 3)}`, 15, true)}` +
    `${pad(`${fmt(stats.ratio.p25, 3)}-${fmt(stats.ratio.p75, 3)}`, 15, true)}${pad(`${fmt(stats.ratio.min, 3)}-${fmt(stats.ratio.max, 3)}`, 15, true)}` +
    `${pad(withTarget ? (stats.ratio.median <= target ? 'met' : 'MISSED') : '', 9, true)}`;
  lines.push(row('turn, cold: spawn/submit -> result', all.coldTurn, true));
  lines.push(row('cold spawn -> first delta', all.coldFirstDelta, true));
  lines.push(row('turn, warm (2nd turn, same process)', all.warmTurn, false));
  lines.push(row('warm submit -> first delta', all.warmFirstDelta, false));
  if (quiet.metrics) {
    lines.push(`  quiet pairs only (${quiet.pairs} of ${options.repetitions}: rest of the machine < ${quietCores} cores during every leg):`);
    lines.push(row('  turn, cold', quiet.metrics.coldTurn, false));
    lines.push(row('  cold spawn -> first delta', quiet.metrics.coldFirstDelta, false));
    lines.push(row('  turn, warm', quiet.metrics.warmTurn, false));
  } else {
    lines.push(`  quiet pairs only: ${quiet.pairs} of ${options.repetitions} (too few for their own lines)`);
  }
  lines.push(`  rest of the machine during the legs: median ${fmt(report.otherLoadCores.median, 2)} cores, max ${fmt(report.otherLoadCores.max, 2)}; waited ${fmt(report.quietWaitMs / 1000, 1)} s for quiet`);
  lines.push('');
  const cpu = report.cpu;
  const cell = (label, raw, tether, note = '') => `  ${pad(label, 40)}${pad(raw, 12, true)}${pad(tether, 16, true)}${note ? `   ${note}` : ''}`;
  lines.push(cell('warm turn, medians', 'raw (a)', 'Tether (b)'));
  lines.push(cell('bench process CPU per 1,000 deltas', `${fmt(cpu.benchPer1k.raw, 1)} ms`, `${fmt(cpu.benchPer1k.tether, 1)} ms`, `Tether's own cost: +${fmt(cpu.tetherOverheadPer1k, 1)} ms per 1,000 deltas (paired)`));
  lines.push(cell('claude CLI CPU per turn', `${fmt(cpu.claude.raw)} ms`, `${fmt(cpu.claude.tether)} ms`));
  lines.push(cell('fake API CPU per turn', `${fmt(cpu.api.raw)} ms`, `${fmt(cpu.api.tether)} ms`));
  lines.push(cell('deltas seen / events delivered', fmt(report.counts.rawDeltas), `${fmt(report.counts.tetherDeltas)} / ${fmt(report.counts.tetherDelivered)}`));
  lines.push(cell('store commits per turn (Tether)', '', fmt(report.writer.commits), `median batch ${fmt(report.writer.medianBatch)} event(s), mean ${fmt(report.writer.meanBatch, 1)}; ${fmt(report.writer.commitMs, 1)} ms wall inside store.commit`));
  if (report.counts.tetherDiagnostics.length > 0) lines.push(`  Tether diagnostics seen: ${report.counts.tetherDiagnostics.join(', ')}`);
  if (report.store) {
    lines.push('');
    lines.push(`  Store alone (${options.deltas} run.message_delta events, SQLite in a temp dir; medians of ${report.store.rounds} rounds)`);
    lines.push(`    store.commit (events + session row per transaction), events/s by batch size:`);
    lines.push(`      ${report.store.direct.map((entry) => `${entry.batchSize}: ${fmt(entry.eventsPerSecond)}`).join('   ')}`);
    lines.push(`    runtime + mock provider -> store -> 1 subscriber, events/s (turn ms):`);
    lines.push(`      ${report.store.runtime.map((entry) => `${entry.variant}: ${fmt(entry.eventsPerSecond)} (${fmt(entry.turnMs, 1)} ms)`).join('   ')}`);
  }
  lines.push('');
  const verdict = (stats) => {
    const [low, high] = stats.ratio.ci95;
    const met = stats.ratio.median <= target ? 'met' : 'missed';
    const resolved = high <= target ? 'the whole 95% CI is within it' : low > target ? 'the whole 95% CI is above it' : 'the 95% CI straddles it: more repetitions needed to be sure';
    return `${met} (${fmt(stats.ratio.median, 3)}; ${resolved})`;
  };
  lines.push(`  targets (median paired ratio <= ${target}): cold turn ${verdict(all.coldTurn)}; cold first delta ${verdict(all.coldFirstDelta)}`);
  return lines;
}

function lifecycleReportLines(report) {
  const { lifecycle, options } = report;
  const lines = [''];
  const header = (title, a = 'raw (a)', b = 'Tether (b)') =>
    `  ${pad(title, 52)}${pad(a, 10, true)}${pad(b, 12, true)}${pad('b/a', 8, true)}${pad('95% CI', 15, true)}${pad('IQR', 15, true)}${pad('n', 4, true)}`;
  const row = (label, stats) =>
    `  ${pad(label, 52)}${pad(fmt(stats.raw.median, 1), 10, true)}${pad(fmt(stats.tether.median, 1), 12, true)}${pad(fmt(stats.ratio.median, 2), 8, true)}` +
    `${pad(`${fmt(stats.ratio.ci95[0], 2)}-${fmt(stats.ratio.ci95[1], 2)}`, 15, true)}${pad(`${fmt(stats.ratio.p25, 2)}-${fmt(stats.ratio.p75, 2)}`, 15, true)}${pad(stats.ratio.n, 4, true)}`;
  const single = (label, stats) => `  ${pad(label, 52)}${pad('', 10, true)}${pad(fmt(stats.median, 1), 12, true)}   (IQR ${fmt(stats.p25, 1)}-${fmt(stats.p75, 1)}, min-max ${fmt(stats.min, 1)}-${fmt(stats.max, 1)}, n ${stats.n})`;
  const load = (entry) => `quiet pairs ${entry.quietPairs} of ${entry.otherLoadCores.n}; rest of the machine median ${fmt(entry.otherLoadCores.median, 2)} cores, max ${fmt(entry.otherLoadCores.max, 2)}`;
  lines.push(`  Lifecycle scenarios (${options.lifecycleRepetitions} pairs each, sequential, order alternating; medians in ms; ratio = median of paired b/a)`);
  if (lifecycle.interrupt) {
    const entry = lifecycle.interrupt;
    lines.push(header('interrupt, during a slow stream (after 1st delta)'));
    lines.push(row('request -> result line / run.completed delivered', entry.completed));
    lines.push(row('request -> control_response / interruptRun receipt', entry.acknowledged));
    lines.push(row('(slow turn: submit -> first delta)', entry.firstDelta));
    lines.push(row('  request -> result line / provider emits run.completed', entry.providerCompleted));
    lines.push(single('  provider emits run.completed -> delivered', entry.providerToDelivered));
    lines.push(single('request -> run.interrupt_requested delivered', entry.requestedEvent));
    lines.push(`    ${load(entry)}; raw result subtypes: ${entry.rawResultSubtypes.join(', ')}`);
  }
  if (lifecycle.lifecycle) {
    const entry = lifecycle.lifecycle;
    lines.push(header('open session -> first delta; close'));
    lines.push(row('cold: spawn / openSession -> first delta', entry.coldFirstDelta));
    lines.push(row('cold: spawn / openSession -> result / completed', entry.coldTurn));
    lines.push(row('warm (2nd turn): submit -> first delta', entry.warmFirstDelta));
    lines.push(row('warm (2nd turn): submit -> result / completed', entry.warmTurn));
    lines.push(single('  warm: provider emits run.completed -> delivered', entry.warmCompletedLag));
    lines.push(`    cold path: openSession resolves in ${fmt(entry.openSession.median, 1)} ms; the CLI is spawned ${fmt(entry.spawnAfter.tether.median, 1)} ms after openSession was called (raw: spawn() returns after ${fmt(entry.spawnAfter.raw.median, 1)} ms)`);
    if (entry.warmPool) {
      lines.push(row('warm pool: raw cold spawn vs openSession -> 1st delta', entry.warmPoolFirstDelta));
      lines.push(row('warm pool: Tether cold (a) vs warm pool (b)', entry.warmPoolVsTetherCold));
      lines.push(row('warm pool: raw cold turn vs openSession -> completed', entry.warmPoolTurn));
      lines.push(`    warm pool: spares 1; waited a median ${fmt(entry.spareWaitMs.median)} ms (outside the timings) for the spare to be idle before each triple`);
    } else {
      lines.push('    warm pool: not measured (the built provider has no warmPool setting, or --no-warm-pool)');
    }
    lines.push(row('idle close: EOF -> exit / closeSession resolved', entry.idleClose));
    lines.push(single('  process gone (/proc poll) -> raw exit event', entry.idleCloseAfterDeath.raw));
    lines.push(single('  process gone (/proc poll) -> closeSession resolved', entry.idleCloseAfterDeath.tether));
    lines.push(single('idle close -> session.process_stopped delivered', entry.idleCloseStoppedEvent));
    lines.push(row('busy close: EOF+SIGTERM -> exit / closeSession', entry.busyClose));
    lines.push(single('  closeSession -> SIGTERM sent to the CLI (raw: 0)', entry.busyCloseSigterm));
    lines.push(single('  process gone (/proc poll) -> raw exit event', entry.busyCloseAfterDeath.raw));
    lines.push(single('  process gone (/proc poll) -> closeSession resolved', entry.busyCloseAfterDeath.tether));
    lines.push(single('busy close -> run.completed delivered', entry.busyCloseRunCompleted));
    lines.push(`    busy close outcomes: ${entry.busyCloseOutcomes.join(', ')}; process gone when closeSession resolved: ${entry.processGoneAtResolve} of ${entry.otherLoadCores.n}; process_stopped reasons: ${entry.stoppedReasons.join(', ')}; raw exit codes idle ${entry.rawExitCodes.idle.join('/')}, busy ${entry.rawExitCodes.busy.join('/')}`);
    lines.push(`    ${load(entry)}`);
  }
  if (lifecycle.crash) {
    const entry = lifecycle.crash;
    lines.push(header('crash: SIGKILL of claude mid-turn', 'raw close', 'Tether'));
    lines.push(row('SIGKILL -> raw stdio closed / run.completed delivered', entry.versusRawClose));
    lines.push(single('SIGKILL -> run.completed (Tether)', entry.completed));
    lines.push(single('SIGKILL -> session.process_stopped delivered', entry.processStoppedEvent));
    lines.push(single('SIGKILL -> raw exit event (floor)', entry.rawExit));
    lines.push(single('SIGKILL -> process gone (/proc poll, both legs)', entry.died));
    lines.push(single('  process gone -> raw exit event', entry.afterDeath.raw));
    lines.push(single('  process gone -> run.completed delivered', entry.afterDeath.tether));
    lines.push(`    outcomes: ${entry.outcomes.join(', ')}; process_stopped reasons: ${entry.stoppedReasons.join(', ')}; ${load(entry)}`);
  }
  if (lifecycle.memory) {
    const { alive, released, ratio } = lifecycle.memory;
    const mib = (kb) => `${fmt(kb / 1024, 1)} MiB`;
    lines.push(`  memory per idle open session (${alive.sessions} sessions, each after one turn)   bench RSS delta + claude RSS = per session`);
    for (const variant of [alive, released]) {
      lines.push(`    ${pad(variant.variant === 'alive' ? 'process alive' : 'process released (idleReleaseMs 250)', 40)}${pad(mib(variant.benchRssDeltaKb), 12, true)} + ${pad(mib(variant.claudeRssKb), 12, true)} (${variant.claudeProcesses} proc) = ${mib(variant.perSessionKb)} (heap ${fmt(variant.perSessionHeapBytes / 1024, 1)} KiB)`);
    }
    lines.push(`    ratio alive/released per session: ${fmt(ratio)} (a released session costs only the host's bookkeeping; the claude process is ~all of an alive one)`);
  }
  if (lifecycle.soak) {
    const soak = lifecycle.soak;
    lines.push(`  soak: ${soak.cycles} open/turn/close cycles through one runtime in ${fmt(soak.totalMs / 1000, 1)} s; per cycle median ${fmt(soak.cycle.median)} ms, p95 ${fmt(soak.p95CycleMs)} ms, max ${fmt(soak.cycle.max)} ms`);
    lines.push(`    fds ${soak.before.fds} before, ${soak.after.fds} after (runtime up), ${soak.afterShutdown.fds} after shutdown; live claude with the bench HOME: ${soak.after.claude} after, ${soak.afterShutdown.claude} after shutdown`);
    lines.push(`    bench RSS ${fmt(soak.before.rssKb / 1024, 1)} -> ${fmt(soak.after.rssKb / 1024, 1)} MiB, heap after GC ${fmt(soak.before.heapBytes / 2 ** 20, 1)} -> ${fmt(soak.after.heapBytes / 2 ** 20, 1)} MiB (${fmt((soak.after.heapBytes - soak.before.heapBytes) / 1024 / soak.cycles, 1)} KiB per cycle${soak.halfway ? `; second half ${fmt((soak.after.heapBytes - soak.halfway.heapBytes) / 1024 / (soak.cycles - soak.halfway.cycles), 1)} KiB per cycle` : ''}); process not gone at close: ${soak.notGoneAtResolve}; stop reasons ${JSON.stringify(soak.stoppedReasons)}; sessions listed ${soak.sessionsListed}`);
  }
  lines.push(`  lifecycle: waited ${fmt(lifecycle.quietWaitMs / 1000, 1)} s for quiet`);
  return lines;
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
  const loadAtStart = loadAverage();
  const root = await realpath(await mkdtemp(path.join(os.tmpdir(), 'tether-bench-')));
  const workspace = path.join(root, 'workspace');
  await mkdir(workspace);
  const selected = (name) => options.scenarios.includes(name);
  let api;
  try {
    api = await startFakeApiProcess(options.deltas);
    const environment = await baseEnvironment({ root, apiUrl: api.url });
    const common = { claudePath, environment, workspace, prompt, apiPid: api.pid, turns: 2 };
    const machine = {
      cpus: os.cpus().length,
      cpuModel: os.cpus()[0]?.model ?? 'unknown',
      platform: `${os.platform()} ${os.release()}`,
      node: process.version,
      claude: claudeVersion(claudePath, environment),
      totalMemoryGb: round(os.totalmem() / 2 ** 30, 1),
    };
    console.log(`bench: claude ${machine.claude} (${claudePath}); fake API pid ${api.pid} at ${api.url}; scenarios ${options.scenarios.join(', ')}`);

    // Warm-up pair (not counted; always run): page cache, the CLI's HOME (its very first start in a
    // fresh HOME takes seconds), Node's JIT. Also checks launch parity.
    const warmRaw = await runRawTurns(common);
    const warmTether = await runTetherTurns({ ...common, inspectChild: true });
    const launchParity = compareLaunch(warmTether.launch, environment);
    console.log(`bench: warm-up cold turn raw ${fmt(warmRaw.turns[0].turnMs)} ms, Tether ${fmt(warmTether.turns[0].turnMs)} ms; launch parity ${launchParity.identical ? `identical${launchParity.ignored?.length ? ` (apart from ${launchParity.ignored.join(', ')})` : ''}` : JSON.stringify(launchParity.differences ?? launchParity.note)}`);

    const report = {
      date: new Date().toISOString(),
      options: {
        scenarios: options.scenarios,
        repetitions: options.repetitions,
        deltas: options.deltas,
        lifecycleRepetitions: options.lifecycleRepetitions,
        sessions: options.sessions,
        soakCycles: options.soakCycles,
        transportRepetitions: options.transportRepetitions,
        daemon: { sessions: options.daemonSessions, repetitions: options.daemonRepetitions, deltas: options.daemonDeltas, subscribers: options.subscribers, fanoutDeltas: options.fanoutDeltas, fanoutTurns: options.fanoutTurns, fanoutPacedMs: options.fanoutPacedMs, fanoutPacedTurns: options.fanoutPacedTurns },
        output: options.output,
        waitForQuiet: options.wait,
      },
      machine,
      claudePath,
      launchParity,
      loadAverage: { start: loadAtStart, end: NaN },
      store: null,
      warmUp: { raw: warmRaw, tether: { ...warmTether, launch: undefined, turns: warmTether.turns.map((turn) => ({ ...turn, batchSizes: undefined })) } },
    };

    if (selected('main')) Object.assign(report, await runMainScenario({ options, common, api }));
    if (selected('main') && options.store) {
      const rounds = 9;
      report.store = {
        rounds,
        direct: await measureStoreDirect({ deltas: options.deltas, rounds }),
        runtime: await measureRuntimeMock({ deltas: options.deltas, rounds }),
      };
    }
    if (['interrupt', 'lifecycle', 'crash', 'memory', 'soak'].some(selected)) report.lifecycle = await runLifecycleScenarios({ options, context: { claudePath, environment, workspace, apiPid: api.pid }, selected });
    if (selected('transports')) report.transports = await runTransportScenario({ options, context: { claudePath, environment, workspace, prompt, apiPid: api.pid } });
    if (selected('daemon')) report.daemon = await runDaemonScenario({ options, context: { claudePath, environment, workspace, apiPid: api.pid } });
    report.loadAverage.end = loadAverage();
    report.durationSeconds = round((Date.now() - started) / 1000, 1);
    await mkdir(path.dirname(options.output), { recursive: true });
    await writeFile(options.output, `${JSON.stringify(report, null, 2)}\n`);
    printReport(report);
  } finally {
    await api?.stop();
    await rm(root, { recursive: true, force: true });
  }
}

/** The main scenario: N interleaved pairs of (raw loop, Tether) legs of two 2,000-delta turns. */
async function runMainScenario({ options, common, api }) {
  const pairs = [];
  let quietWaitMs = 0;
  for (let repetition = 0; repetition < options.repetitions; repetition += 1) {
    if (options.wait && quietWaitMs < quietWaitTotalMs) {
      quietWaitMs += await waitForQuiet({ thresholdCores: quietCores, maxMs: Math.min(quietWaitPerPairMs, quietWaitTotalMs - quietWaitMs), ownPids: [api.pid] });
    }
    const order = repetition % 2 === 0 ? ['raw', 'tether'] : ['tether', 'raw'];
    const pair = { repetition: repetition + 1, order: order.join(',') };
    for (const leg of order) pair[leg] = leg === 'raw' ? await runRawTurns(common) : await runTetherTurns(common);
    const legs = [...pair.raw.turns, ...pair.tether.turns];
    pair.otherLoadCores = Math.max(...legs.map((turn) => turn.foreignCpuMs / turn.turnMs));
    pair.quiet = pair.otherLoadCores < quietCores;
    pairs.push(pair);
    const [rawCold, rawWarm] = pair.raw.turns;
    const [tetherCold, tetherWarm] = pair.tether.turns;
    console.log(
      `bench: #${pair.repetition} ${pair.order.padEnd(10)} cold ${fmt(rawCold.turnMs)}/${fmt(tetherCold.turnMs)} ms = ${fmt(tetherCold.turnMs / rawCold.turnMs, 3)}` +
        `  first delta ${fmt(rawCold.firstDeltaMs)}/${fmt(tetherCold.firstDeltaMs)} = ${fmt(tetherCold.firstDeltaMs / rawCold.firstDeltaMs, 3)}` +
        `  warm ${fmt(rawWarm.turnMs)}/${fmt(tetherWarm.turnMs)} = ${fmt(tetherWarm.turnMs / rawWarm.turnMs, 3)}` +
        `  CPU ${fmt(rawWarm.cpuMs)}/${fmt(tetherWarm.cpuMs)} ms  ${tetherWarm.commits} commits  other load ${fmt(pair.otherLoadCores, 2)}`,
    );
  }

  const quietPairs = pairs.filter((pair) => pair.quiet);
  const warm = (leg) => leg.turns[1];
  const per1k = (turn) => (turn.cpuMs / Math.max(1, turn.deltas)) * 1000;
  const batches = pairs.flatMap((pair) => warm(pair.tether).batchSizes);
  return {
    all: metrics(pairs),
    quiet: { thresholdCores: quietCores, pairs: quietPairs.length, metrics: quietPairs.length >= 3 ? metrics(quietPairs) : null },
    otherLoadCores: summarize(pairs.map((pair) => pair.otherLoadCores)),
    quietWaitMs,
    cpu: {
      benchPer1k: { raw: median(pairs.map((pair) => per1k(warm(pair.raw)))), tether: median(pairs.map((pair) => per1k(warm(pair.tether)))) },
      tetherOverheadPer1k: median(pairs.map((pair) => per1k(warm(pair.tether)) - per1k(warm(pair.raw)))),
      coldBench: { raw: median(pairs.map((pair) => pair.raw.turns[0].cpuMs)), tether: median(pairs.map((pair) => pair.tether.turns[0].cpuMs)) },
      claude: { raw: median(pairs.map((pair) => warm(pair.raw).childCpuMs)), tether: median(pairs.map((pair) => warm(pair.tether).childCpuMs)) },
      api: { raw: median(pairs.map((pair) => warm(pair.raw).apiCpuMs)), tether: median(pairs.map((pair) => warm(pair.tether).apiCpuMs)) },
    },
    counts: {
      rawDeltas: median(pairs.map((pair) => warm(pair.raw).deltas)),
      tetherDeltas: median(pairs.map((pair) => warm(pair.tether).deltas)),
      tetherDelivered: median(pairs.map((pair) => warm(pair.tether).delivered)),
      tetherEventTypes: pairs[0]?.tether.types,
      tetherDiagnostics: [...new Set(pairs.flatMap((pair) => pair.tether.diagnostics))],
    },
    writer: {
      commits: median(pairs.map((pair) => warm(pair.tether).commits)),
      medianBatch: median(batches),
      meanBatch: batches.reduce((sum, size) => sum + size, 0) / Math.max(1, batches.length),
      commitMs: median(pairs.map((pair) => warm(pair.tether).commitMs)),
    },
    pairs: pairs.map((pair) => ({ ...pair, tether: { ...pair.tether, turns: pair.tether.turns.map((turn) => ({ ...turn, batchSizes: undefined })) } })),
  };
}

/** Paired b/a over legs `a` and `b` of each pair, each leg's figure picked by its own function. */
function comparePaired(pairs, pickA, pickB, legA = 'raw', legB = 'tether') {
  const usable = pairs.filter((pair) => Number.isFinite(pickA(pair[legA])) && Number.isFinite(pickB(pair[legB])));
  const ratios = usable.map((pair) => pickB(pair[legB]) / pickA(pair[legA]));
  return {
    raw: summarize(usable.map((pair) => pickA(pair[legA]))),
    tether: summarize(usable.map((pair) => pickB(pair[legB]))),
    ratio: withInterval(summarize(ratios), ratios),
  };
}

/**
 * Waits before each pair until the rest of the machine is quiet, within a budget per pair and in all.
 * Own processes (the fake API, idle claude children) are not "the rest of the machine".
 */
function quietGate(options, { perPairMs, totalMs }) {
  const gate = {
    quietCores,
    waitedMs: 0,
    async beforePair() {
      if (!options.wait || gate.waitedMs >= totalMs) return;
      const ownPids = descendantsOf(process.pid).map((child) => child.pid);
      gate.waitedMs += await waitForQuiet({ thresholdCores: quietCores, maxMs: Math.min(perPairMs, totalMs - gate.waitedMs), ownPids });
    },
  };
  return gate;
}

async function runLifecycleScenarios({ options, context, selected }) {
  const gate = quietGate(options, { perPairMs: lifecycleQuietWaitPerPairMs, totalMs: lifecycleQuietWaitTotalMs });
  const log = (line) => console.log(line);
  const repetitions = options.lifecycleRepetitions;
  const result = { quietWaitMs: 0 };
  const quietSummary = (pairs) => ({ quietPairs: pairs.filter((pair) => pair.quiet).length, otherLoadCores: summarize(pairs.map((pair) => pair.otherLoadCores)) });

  if (selected('interrupt')) {
    const { pairs } = await measureInterrupts(context, { repetitions, gate, log });
    result.interrupt = {
      ...quietSummary(pairs),
      completed: comparePaired(pairs, (leg) => leg.completedMs, (leg) => leg.completedMs),
      acknowledged: comparePaired(pairs, (leg) => leg.ackMs, (leg) => leg.ackMs),
      firstDelta: comparePaired(pairs, (leg) => leg.firstDeltaMs, (leg) => leg.firstDeltaMs),
      requestedEvent: summarize(pairs.map((pair) => pair.tether.requestedEventMs)),
      providerCompleted: comparePaired(pairs, (leg) => leg.completedMs, (leg) => leg.providerCompletedMs),
      providerToDelivered: summarize(pairs.map((pair) => pair.tether.completedMs - pair.tether.providerCompletedMs)),
      rawResultSubtypes: [...new Set(pairs.map((pair) => pair.raw.resultSubtype))],
      pairs,
    };
  }
  if (selected('lifecycle')) {
    const warmPool = options.warmPool ?? warmPoolAvailable(repoRoot);
    const { pairs, spareWaitMs } = await measureLifecycle(context, { repetitions, gate, log, warmPool });
    const idle = pairs.filter((pair) => pair.raw.closeKind === 'idle');
    const busy = pairs.filter((pair) => pair.raw.closeKind === 'busy');
    result.lifecycle = {
      ...quietSummary(pairs),
      warmPool,
      coldFirstDelta: comparePaired(pairs, (leg) => leg.coldFirstDeltaMs, (leg) => leg.coldFirstDeltaMs),
      coldTurn: comparePaired(pairs, (leg) => leg.coldTurnMs, (leg) => leg.coldTurnMs),
      warmFirstDelta: comparePaired(pairs, (leg) => leg.warmFirstDeltaMs, (leg) => leg.warmFirstDeltaMs),
      warmTurn: comparePaired(pairs, (leg) => leg.warmTurnMs, (leg) => leg.warmTurnMs),
      warmCompletedLag: summarize(pairs.map((pair) => pair.tether.warmCompletedLagMs)),
      openSession: summarize(pairs.map((pair) => pair.tether.openSessionMs)),
      spawnAfter: { raw: summarize(pairs.map((pair) => pair.raw.spawnReturnedMs)), tether: summarize(pairs.map((pair) => pair.tether.spawnEmittedMs)) },
      idleClose: comparePaired(idle, (leg) => leg.closeMs, (leg) => leg.closeMs),
      idleCloseStoppedEvent: summarize(idle.map((pair) => pair.tether.processStoppedEventMs)),
      // Where the poll caught the death (it cannot when the host handles the exit without an idle tick between).
      idleCloseAfterDeath: { raw: summarize(idle.map((pair) => pair.raw.closeMs - pair.raw.diedMs)), tether: summarize(idle.map((pair) => pair.tether.closeMs - pair.tether.diedMs)) },
      busyClose: comparePaired(busy, (leg) => leg.closeMs, (leg) => leg.closeMs),
      busyCloseAfterDeath: { raw: summarize(busy.map((pair) => pair.raw.closeMs - pair.raw.diedMs)), tether: summarize(busy.map((pair) => pair.tether.closeMs - pair.tether.diedMs)) },
      busyCloseSigterm: summarize(busy.map((pair) => pair.tether.sigtermMs)),
      busyCloseRunCompleted: summarize(busy.map((pair) => pair.tether.runCompletedMs)),
      busyCloseOutcomes: [...new Set(busy.map((pair) => pair.tether.runOutcome))],
      processGoneAtResolve: pairs.filter((pair) => pair.tether.processGoneAtResolve === true).length,
      rawExitCodes: { idle: [...new Set(idle.map((pair) => pair.raw.exit))], busy: [...new Set(busy.map((pair) => pair.raw.exit))] },
      stoppedReasons: [...new Set(pairs.map((pair) => pair.tether.processStoppedReason))],
      ...(warmPool
        ? {
            warmPoolFirstDelta: comparePaired(pairs, (leg) => leg.coldFirstDeltaMs, (leg) => leg.coldFirstDeltaMs, 'raw', 'warmPool'),
            warmPoolVsTetherCold: comparePaired(pairs, (leg) => leg.coldFirstDeltaMs, (leg) => leg.coldFirstDeltaMs, 'tether', 'warmPool'),
            warmPoolTurn: comparePaired(pairs, (leg) => leg.coldTurnMs, (leg) => leg.coldTurnMs, 'raw', 'warmPool'),
            spareWaitMs: summarize(spareWaitMs),
          }
        : {}),
      pairs,
    };
  }
  if (selected('crash')) {
    const { pairs } = await measureCrashes(context, { repetitions, gate, log });
    result.crash = {
      ...quietSummary(pairs),
      completed: summarize(pairs.map((pair) => pair.tether.completedMs)),
      processStoppedEvent: summarize(pairs.map((pair) => pair.tether.processStoppedEventMs)),
      rawExit: summarize(pairs.map((pair) => pair.raw.exitMs)),
      rawClosed: summarize(pairs.map((pair) => pair.raw.closedMs)),
      died: summarize(pairs.flatMap((pair) => [pair.raw.diedMs, pair.tether.diedMs])),
      afterDeath: { raw: summarize(pairs.map((pair) => pair.raw.closedMs - pair.raw.diedMs)), tether: summarize(pairs.map((pair) => pair.tether.completedMs - pair.tether.diedMs)) },
      versusRawClose: comparePaired(pairs, (leg) => leg.closedMs, (leg) => leg.completedMs),
      outcomes: [...new Set(pairs.map((pair) => pair.tether.outcome))],
      stoppedReasons: [...new Set(pairs.map((pair) => pair.tether.stoppedReason))],
      pairs,
    };
  }
  if (selected('memory')) result.memory = await measureMemory(context, { sessions: options.sessions, log });
  if (selected('soak')) {
    const soak = await measureSoak(context, { cycles: options.soakCycles, log });
    result.soak = { ...soak, cycle: summarize(soak.cycleMs), p95CycleMs: quantile(soak.cycleMs, 0.95) };
  }
  result.quietWaitMs = gate.waitedMs;
  return result;
}

async function runTransportScenario({ options, context }) {
  const gate = quietGate(options, { perPairMs: lifecycleQuietWaitPerPairMs, totalMs: transportQuietWaitTotalMs });
  const result = await measureTransports(context, { repetitions: options.transportRepetitions, gate, log: (line) => console.log(line), repoRoot });
  return { ...summarizeTransports(result), quietWaitMs: gate.waitedMs };
}

function transportReportLines(report) {
  const { transports: entry, options } = report;
  const lines = [''];
  const row = (label, stats, scale = 1, digits = 0) =>
    `  ${pad(label, 52)}${pad(fmt(stats.cli.median / scale, digits), 10, true)}${pad(fmt(stats.sdk.median / scale, digits), 10, true)}${pad(fmt(stats.ratio.median, 3), 8, true)}` +
    `${pad(`${fmt(stats.ratio.ci95[0], 2)}-${fmt(stats.ratio.ci95[1], 2)}`, 13, true)}${pad(`${fmt(stats.ratio.p25, 2)}-${fmt(stats.ratio.p75, 2)}`, 13, true)}${pad(`${fmt(stats.ratio.min, 2)}-${fmt(stats.ratio.max, 2)}`, 13, true)}${pad(stats.ratio.n, 4, true)}`;
  const both = (values, format = (value) => fmt(value)) => `cli ${format(values.cli)} / sdk ${format(values.sdk)}`;
  const mib = (kb) => `${fmt(kb / 1024, 1)} MiB`;
  lines.push(`  Transport scenario: the main scenario's turns (a cold then a warm turn of ${options.deltas} deltas) through the Claude provider's cli and sdk transports;`);
  lines.push(`    each leg a fresh host process (bench/transport-host.mjs: runtime over SQLite, one subscriber); ${entry.repetitions} pairs + 1 warm-up leg each, order alternating`);
  lines.push(`  ${pad('medians; ratio = sdk/cli, paired', 52)}${pad('cli (a)', 10, true)}${pad('sdk (b)', 10, true)}${pad('b/a', 8, true)}${pad('95% CI', 13, true)}${pad('IQR', 13, true)}${pad('min-max', 13, true)}${pad('n', 4, true)}`);
  lines.push(row('turn, cold: submit -> run.completed (ms)', entry.coldTurn));
  lines.push(row('cold: openSession -> first delta (ms)', entry.openFirstDelta));
  lines.push(row('cold: submit -> first delta (ms)', entry.coldFirstDelta));
  lines.push(row('  openSession -> first submit (ms)', entry.openSession, 1, 1));
  lines.push(row('turn, warm: submit -> run.completed (ms)', entry.warmTurn));
  lines.push(row('warm: submit -> first delta (ms)', entry.warmFirstDelta, 1, 1));
  lines.push(row('host process RSS after the turns (MiB)', entry.hostRss, 1024, 1));
  lines.push(row('host process peak RSS, VmHWM (MiB)', entry.hostPeak, 1024, 1));
  lines.push(row('host JS heap after a full GC (MiB)', entry.hostHeap, 2 ** 20, 1));
  lines.push(row('agent process tree RSS after the turns (MiB)', entry.agentRss, 1024, 1));
  lines.push(row('agent process tree peak RSS, VmHWM (MiB)', entry.agentPeak, 1024, 1));
  lines.push(row('host CPU, cold turn (ms)', entry.hostCpuCold));
  lines.push(row('host CPU, warm turn (ms)', entry.hostCpuWarm));
  lines.push(row('agent CPU, warm turn (ms)', entry.agentCpuWarm));
  lines.push(`    host = the Node process running Tether (for sdk also the Agent SDK's query()), RSS ${both(entry.hostBaselineRssKb, mib)} before its runtime started;`);
  lines.push(`    agent = every process under the host, read while idle after the 2nd turn: cli ${entry.agentProcesses.cli.join(', ')} / sdk ${entry.agentProcesses.sdk.join(', ')}`);
  lines.push(`    deltas per warm turn ${both(entry.deltas)}, events delivered ${both(entry.delivered)}; runtime.shutdown() ${both(entry.shutdownMs)} ms, host exit after its result ${both(entry.exitAfterResultMs)} ms, hosts kept alive: ${entry.lingered}`);
  const diagnostics = [...entry.diagnostics.cli.map((code) => `cli ${code}`), ...entry.diagnostics.sdk.map((code) => `sdk ${code}`)];
  if (diagnostics.length > 0) lines.push(`    diagnostics seen: ${diagnostics.join(', ')}`);
  if (entry.launch.checked) {
    const { onlyCli, onlySdk } = entry.launch;
    const argv = onlyCli.length + onlySdk.length === 0 ? 'the same arguments' : `arguments only cli passes: ${onlyCli.join(' ') || 'none'}, only sdk: ${onlySdk.join(' ') || 'none'}`;
    lines.push(`    the CLI as launched (read from /proc), sdk against cli: ${argv} (order and --flag=value forms aside); environment differs in ${entry.launch.environmentChanged.join(', ') || 'nothing'}`);
  }
  lines.push(`    quiet pairs ${entry.quietPairs} of ${entry.repetitions}, rest of the machine median ${fmt(entry.otherLoadCores.median, 2)} cores, max ${fmt(entry.otherLoadCores.max, 2)}; waited ${fmt(entry.quietWaitMs / 1000, 1)} s for quiet; processes with the bench HOME left after a leg: ${entry.leftoverProcesses}`);
  return lines;
}

async function runDaemonScenario({ options, context }) {
  const gate = quietGate(options, { perPairMs: quietWaitPerPairMs, totalMs: lifecycleQuietWaitTotalMs });
  const result = await measureDaemon(context, {
    sessions: options.daemonSessions,
    repetitions: options.daemonRepetitions,
    turnDeltas: options.daemonDeltas,
    subscribers: options.subscribers,
    fanoutDeltas: options.fanoutDeltas,
    fanoutTurns: options.fanoutTurns,
    pacedMs: options.fanoutPacedMs,
    pacedTurns: options.fanoutPacedTurns,
    gate,
    log: (line) => console.log(line),
    repoRoot,
  });
  return { ...summarizeDaemon(result, { bootstrapMedianInterval }), quietWaitMs: gate.waitedMs };
}

function daemonReportLines(report) {
  const { daemon } = report;
  const mib = (kb) => `${fmt(kb / 1024, 1)} MiB`;
  const lines = [''];
  lines.push(`  Daemon scenario: ${daemon.sessions} concurrent sessions, each a cold then a warm turn of ${daemon.turnDeltas} deltas, all ${daemon.sessions} submitted at once;`);
  lines.push(`    daemon = bench/daemon-server.mjs (own process), @tether/client submitTurn -> run.completed on its SSE subscription; in-process = runtime in the bench process;`);
  lines.push(`    ${daemon.repetitions} repetitions, legs alternating; p50/p99 pooled over ${daemon.cold.daemon.n} turns per leg; ratio = median over repetitions of daemon/in-process (95% CI)`);
  lines.push(`  ${pad('turn time (ms)', 36)}${pad('in-proc p50', 12, true)}${pad('p99', 8, true)}${pad('daemon p50', 12, true)}${pad('p99', 8, true)}${pad('p50 ratio', 11, true)}${pad('95% CI', 13, true)}${pad('p99 ratio', 11, true)}${pad('95% CI', 13, true)}`);
  for (const [label, entry] of [['cold (spawn + turn), 20 at once', daemon.cold], ['warm (2nd turn), 20 at once', daemon.warm]]) {
    lines.push(
      `  ${pad(label.replace('20', String(daemon.sessions)), 36)}${pad(fmt(entry.inProcess.p50), 12, true)}${pad(fmt(entry.inProcess.p99), 8, true)}${pad(fmt(entry.daemon.p50), 12, true)}${pad(fmt(entry.daemon.p99), 8, true)}` +
        `${pad(fmt(entry.p50Ratio.median, 3), 11, true)}${pad(`${fmt(entry.p50Ratio.ci95[0], 2)}-${fmt(entry.p50Ratio.ci95[1], 2)}`, 13, true)}${pad(fmt(entry.p99Ratio.median, 3), 11, true)}${pad(`${fmt(entry.p99Ratio.ci95[0], 2)}-${fmt(entry.p99Ratio.ci95[1], 2)}`, 13, true)}`,
    );
  }
  const memory = daemon.memory;
  const loop = daemon.loopDelay;
  lines.push(`    event-loop delay in the warm round (p99 / max, ms): runtime's process: in-process (bench) ${fmt(loop.inProcessHostP99, 1)} / ${fmt(loop.inProcessHostMax, 1)}, daemon ${fmt(loop.daemonHostP99, 1)} / ${fmt(loop.daemonHostMax, 1)}; client (bench) in the daemon leg ${fmt(loop.clientP99, 1)} / ${fmt(loop.clientMax, 1)}`);
  lines.push(`    host CPU for the warm round: in-process ${fmt(daemon.hostCpu.warmInProcessMs)} ms; daemon process ${fmt(daemon.hostCpu.warmDaemonMs)} ms + client (bench) ${fmt(daemon.hostCpu.warmClientMs)} ms; deltas per turn seen: ${daemon.warm.deltas.join('/')}`);
  lines.push(`    the ${daemon.sessions} claude CLIs used ${fmt(daemon.hostCpu.warmClaudeInProcessMs)} ms (in-process leg) / ${fmt(daemon.hostCpu.warmClaudeDaemonMs)} ms (daemon leg) of CPU in the warm round (for scale against the host CPU above)`);
  lines.push(`    daemon RSS: ${mib(memory.daemonIdleRssKb)} idle, ${mib(memory.daemonRssKb)} with ${daemon.sessions} sessions after their turns (peak ${mib(memory.daemonHwmKb)}); claude: ${fmt(memory.claudeCount)} processes, ${mib(memory.claudeRssKb)} (${mib(memory.claudeRssKb / Math.max(1, memory.claudeCount))} each; peaks summed ${mib(memory.claudeHwmKb)})`);
  lines.push(`    daemon close with ${daemon.sessions} live CLIs: ${fmt(daemon.daemonCloseMs)} ms; quiet pairs ${daemon.quietPairs} of ${daemon.pairs.length}, rest of the machine median ${fmt(daemon.otherLoadCores.median, 2)} cores; waited ${fmt(daemon.quietWaitMs / 1000, 1)} s for quiet`);
  const fanout = daemon.fanout;
  lines.push(`  fan-out: one session, a turn of ${report.options.daemon.fanoutDeltas} deltas, ${report.options.daemon.fanoutTurns} turns per variant; latency = receipt in the bench process - publish in the daemon (both CLOCK_MONOTONIC;`);
  lines.push(`    IPC check: offset ${fmt(fanout.clock.offsetMs, 3)} ms within a ${fmt(fanout.clock.rttMs, 3)} ms round trip, at the end ${fmt(fanout.clockAfter.offsetMs, 3)} ms); over every (event x subscriber) delivery`);
  lines.push(`  ${pad('subscribers', 30)}${pad('deliveries', 11, true)}${pad('p50', 8, true)}${pad('p99', 8, true)}${pad('max', 8, true)}${pad('1st rcpt p50', 13, true)}${pad('spread p50/p99', 16, true)}${pad('emit->pub p50/p99', 19, true)}${pad('emit->rcpt p99', 15, true)}${pad('turn', 7, true)}${pad('CPU daemon/bench', 18, true)}${pad('µs/delivery', 13, true)}`);
  for (const variant of fanout.variants) {
    lines.push(
      `  ${pad(`${variant.subscribers} x ${variant.kind === 'raw' ? 'raw http' : '@tether/client'}${variant.delayMs ? `, paced ${variant.delayMs} ms` : ''}`, 30)}${pad(fmt(variant.deliveries), 11, true)}${pad(fmt(variant.publishToReceipt.p50, 2), 8, true)}${pad(fmt(variant.publishToReceipt.p99, 1), 8, true)}${pad(fmt(variant.publishToReceipt.max, 1), 8, true)}` +
        `${pad(fmt(variant.publishToFirstReceipt.p50, 2), 13, true)}${pad(`${fmt(variant.spread.p50, 1)}/${fmt(variant.spread.p99, 1)}`, 16, true)}${pad(`${fmt(variant.emitToPublish.p50, 1)}/${fmt(variant.emitToPublish.p99, 1)}`, 19, true)}` +
        `${pad(fmt(variant.emitToReceipt.p99, 1), 15, true)}${pad(fmt(variant.turnMs.median), 7, true)}${pad(`${fmt(variant.cpu.daemonMs)}/${fmt(variant.cpu.benchMs)}`, 18, true)}${pad(fmt((variant.cpu.daemonMs * 1000 * variant.turns) / variant.deliveries, 1), 13, true)}`,
    );
  }
  const last = fanout.variants.at(-1);
  lines.push(`    columns: p50/p99/max publish -> receipt; 1st rcpt = publish -> the first subscriber's receipt; spread = first to last subscriber's receipt of one event;`);
  lines.push(`    emit->pub = provider emitted the delta -> published (writer coalescing + commit); turn = submit -> every subscriber has run.completed; CPU per turn (ms), µs/delivery = daemon CPU / deliveries`);
  lines.push(`    missing deliveries ${fanout.variants.reduce((sum, variant) => sum + variant.missing, 0)}, overflows ${fanout.variants.reduce((sum, variant) => sum + variant.overflows, 0)}, subscriber errors ${fanout.variants.reduce((sum, variant) => sum + variant.errors, 0)}; tether_subscribers gauge ${fanout.variants.map((variant) => variant.subscriberGauge).join('/')}`);
  lines.push(`    daemon RSS: ${mib(fanout.daemonIdleRssKb)} with 1 session; per variant: subscribers connected -> after its turns (heap used) -> after a full GC (heap used); peak`);
  for (const variant of fanout.variants) {
    lines.push(`      ${pad(`${variant.subscribers} x ${variant.kind}${variant.delayMs ? `, paced ${variant.delayMs} ms` : ''}`, 28)}${mib(variant.daemonConnectedRssKb)} -> ${mib(variant.daemonRssKb)} (${mib(variant.daemonHeapUsedBytes / 1024)}) -> ${mib(variant.daemonAfterGcRssKb)} (${mib(variant.daemonAfterGcHeapUsedBytes / 1024)}); peak ${mib(variant.daemonHwmKb)}`);
  }
  lines.push(`    cleanup: claude processes with the bench HOME killed after a leg: ${daemon.leftoverProcesses}; live at the end: ${daemon.finalLiveWithHome}`);
  return lines;
}

main().catch((error) => {
  console.error(`bench: failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  process.exitCode = 1;
});
