#!/usr/bin/env node
// Tether benchmark: the same scripted turn (2,000 text deltas from the fake API) driven (a) by a
// minimal raw loop over the claude CLI and (b) through Tether (translate + persist + publish to
// one subscriber), interleaved; plus events/second through the store alone; plus the lifecycle
// scenarios (bench/lib/lifecycle.mjs): interrupt latency, close latency, open → first delta
// (cold, warm, warm pool), crash detection, memory per idle open session, and (--soak) 200
// open/turn/close cycles; plus the daemon scenario (bench/lib/daemon-scenario.mjs): 20 concurrent
// turns through `startDaemon` in its own process vs in-process, fan-out to 100 subscribers, daemon
// RSS; plus the transport scenario (bench/lib/transport-comparison.mjs): the main scenario's turns
// through the Claude provider's cli and sdk transports, paired; plus the peers scenario
// (bench/lib/peer-comparison.mjs): the raw loop, the Agent SDK, claude-agent-acp and Tether per round;
// plus the sessions scenario (bench/lib/open-sessions.mjs): 1,000 open sessions in one daemon, 50 turns
// at once; plus, only when asked for (--scenarios load), the load scenario (bench/lib/load-scenario.mjs):
// 1,000 open sessions, 50 turns at once on random ones with 8 processes, through a daemon; plus, only when asked for
// (--scenarios store), the store scenario (bench/lib/store-scale-out.mjs): appends, replay and cross-daemon fan-out on
// SQLite and PostgreSQL with 1-3 store processes. It reports; it does not fail the
// build (exit 0 whatever the figures; non-zero only when something is broken).
//
// Usage: ./dev npm run bench
//        ./dev node bench/run-benchmarks.mjs [--scenarios LIST] [--soak] [--repetitions N] [--deltas N] [--transport-repetitions N] [--no-store] [--no-wait] [--output file]
import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { baseEnvironment, findClaudeBinary, rawLaunch } from './lib/claude-setup.mjs';
import { loadAverage } from './lib/proc.mjs';
import { waitForQuiet } from './lib/quiet.mjs';
import { runRawTurns } from './lib/raw-loop.mjs';
import { median, quantile, round, summarize, summarizeRatios } from './lib/stats.mjs';
import { measureRuntimeMock, measureStoreDirect } from './lib/store-throughput.mjs';
import { runTetherTurns } from './lib/tether-turn.mjs';
import {
  measureCrashes,
  measureInterrupts,
  measureLifecycle,
  measureMemory,
  measureSoak,
  warmPoolAvailable,
} from './lib/lifecycle.mjs';
import { descendantsOf } from './lib/proc.mjs';
import { measureDaemon, summarizeDaemon } from './lib/daemon-scenario.mjs';
import { measureTransports, summarizeTransports } from './lib/transport-comparison.mjs';
import { measureLoad } from './lib/load-scenario.mjs';
import { fmt, printReport } from './lib/report-lines.mjs';
import { measureAcp, summarizeAcp } from './lib/acp-comparison.mjs';
import { measurePeers, peerTableLines, summarizePeers } from './lib/peer-comparison.mjs';
import { measureStoreScaleOut } from './lib/store-scale-out.mjs';
import { storeScaleOutLines } from './lib/store-scale-out-report.mjs';
import { startFakeApiProcess } from './lib/fake-api-process.mjs';
import { measureOpenSessions } from './lib/open-sessions.mjs';
import { openSessionsReportLines } from './lib/open-sessions-report.mjs';

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
const allScenarios = [
  'main',
  'interrupt',
  'lifecycle',
  'crash',
  'memory',
  'soak',
  'transports',
  'daemon',
  'load',
  'acp',
  'peers',
  'store',
  'sessions',
];
// Issue 17's figures in one run: the peers side by side and 1,000 open sessions belong to the default.
const defaultScenarios = [
  'main',
  'interrupt',
  'lifecycle',
  'crash',
  'memory',
  'transports',
  'daemon',
  'peers',
  'sessions',
];
const usage =
  'usage: node bench/run-benchmarks.mjs [--scenarios main,interrupt,lifecycle,crash,memory,transports,daemon,peers,sessions,soak,load,acp,store (default: all but soak, load, acp and store)] [--soak (adds soak)]\n' +
  '         [--repetitions N (main, default 10)] [--deltas N (main, default 2000)] [--no-store]\n' +
  '         [--lifecycle-repetitions N (interrupt, lifecycle, crash; default 12)] [--sessions N (memory, default 20)] [--soak-cycles N (default 200)]\n' +
  '         [--warm-pool | --no-warm-pool (default: on when the built provider has warmPool)] [--transport-repetitions N (transports, default 8)] [--no-wait] [--output file]\n' +
  '         daemon: [--daemon-sessions N (20)] [--daemon-repetitions N (3)] [--daemon-deltas N (200)] [--subscribers N (100)] [--fanout-deltas N (500)] [--fanout-turns N (3)]\n' +
  '                 [--fanout-paced-ms N (10; 0 = no paced variant)] [--fanout-paced-turns N (1)]\n' +
  '         load: [--load-sessions N (1000)] [--load-turns N (50)] [--load-processes N (8)]\n' +
  '         acp: [--acp-repetitions N (5)]\n' +
  '         peers: [--peer-repetitions N (11)]\n' +
  "         sessions: [--open-sessions N (1000)] [--open-turns N (50)] [--open-processes N (8)] [--open-resumes N (5)] [--open-agent-nice N (the provider's agentNice, 10)]";

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
    loadSessions: 1000,
    loadTurns: 50,
    loadProcesses: 8,
    acpRepetitions: 5,
    peerRepetitions: 11,
    openSessions: 1000,
    openTurns: 50,
    openProcesses: 8,
    openResumes: 5,
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
    else if (flag === '--scenarios')
      options.scenarios = value()
        .split(',')
        .map((name) => name.trim())
        .filter(Boolean);
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
    else if (flag === '--load-sessions') options.loadSessions = Number(value());
    else if (flag === '--load-turns') options.loadTurns = Number(value());
    else if (flag === '--load-processes') options.loadProcesses = Number(value());
    else if (flag === '--acp-repetitions') options.acpRepetitions = Number(value());
    else if (flag === '--peer-repetitions') options.peerRepetitions = Number(value());
    else if (flag === '--open-sessions') options.openSessions = Number(value());
    else if (flag === '--open-turns') options.openTurns = Number(value());
    else if (flag === '--open-processes') options.openProcesses = Number(value());
    else if (flag === '--open-resumes') options.openResumes = Number(value());
    else if (flag === '--open-agent-nice') options.openAgentNice = Number(value());
    else if (flag === '--help' || flag === '-h') {
      console.log(usage);
      process.exit(0);
    } else throw new Error(`unknown argument ${argv[index]}`);
  }
  if (!Number.isInteger(options.repetitions) || options.repetitions < 1)
    throw new Error('--repetitions must be a positive integer');
  if (!Number.isInteger(options.deltas) || options.deltas < 1) throw new Error('--deltas must be a positive integer');
  for (const name of [
    'lifecycleRepetitions',
    'sessions',
    'soakCycles',
    'transportRepetitions',
    'daemonSessions',
    'daemonRepetitions',
    'daemonDeltas',
    'subscribers',
    'fanoutDeltas',
    'fanoutTurns',
    'loadSessions',
    'loadTurns',
    'loadProcesses',
    'acpRepetitions',
    'peerRepetitions',
    'openSessions',
    'openTurns',
    'openProcesses',
    'openResumes',
  ]) {
    if (!Number.isInteger(options[name]) || options[name] < 1)
      throw new Error(`--${name.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`)} must be a positive integer`);
  }
  const unknown = options.scenarios.filter((name) => !allScenarios.includes(name));
  if (unknown.length > 0)
    throw new Error(`unknown scenario(s) ${unknown.join(', ')}; known: ${allScenarios.join(', ')}`);
  if (!Number.isInteger(options.fanoutPacedMs) || options.fanoutPacedMs < 0 || options.fanoutPacedMs > 9999)
    throw new Error('--fanout-paced-ms must be an integer from 0 to 9999');
  if (!Number.isInteger(options.fanoutPacedTurns) || options.fanoutPacedTurns < 0)
    throw new Error('--fanout-paced-turns must be a non-negative integer');
  // The fake API's sized replies are words w0001..w9999.
  if (options.daemonDeltas > 9999 || options.fanoutDeltas > 9999)
    throw new Error('--daemon-deltas and --fanout-deltas must be at most 9999');
  return options;
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
  if (JSON.stringify(tetherArgv) !== JSON.stringify(rawArgv))
    differences.push(`argv: tether ${JSON.stringify(tetherArgv)} vs raw ${JSON.stringify(rawArgv)}`);
  const ignored = [];
  if (launch.env) {
    for (const name of new Set([...Object.keys(launch.env), ...Object.keys(raw.env)])) {
      if (launch.env[name] === raw.env[name]) continue;
      // Tether's supervision marker: a random value per process that the CLI never reads.
      if (name === 'TETHER_PROCESS_MARKER' && raw.env[name] === undefined) ignored.push(name);
      else
        differences.push(
          `env ${name}: tether ${JSON.stringify(launch.env[name])} vs raw ${JSON.stringify(raw.env[name])}`,
        );
    }
  }
  return {
    checked: true,
    identical: differences.length === 0,
    differences,
    ignored,
    argv: rawArgv,
    environmentNames: Object.keys(raw.env).sort(),
  };
}

/** Per-metric stats over the main scenario's pairs: each leg's distribution and the paired ratios Tether/raw. */
function metrics(pairs) {
  const same = (pick) => comparePaired(pairs, pick, pick);
  return {
    coldTurn: same((leg) => leg.turns[0].turnMs),
    coldFirstDelta: same((leg) => leg.turns[0].firstDeltaMs),
    warmTurn: same((leg) => leg.turns[1].turnMs),
    warmFirstDelta: same((leg) => leg.turns[1].firstDeltaMs),
  };
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
    api = await startFakeApiProcess(repoRoot, options.deltas);
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
    console.log(
      `bench: claude ${machine.claude} (${claudePath}); fake API pid ${api.pid} at ${api.url}; scenarios ${options.scenarios.join(', ')}`,
    );

    // Warm-up pair (not counted): page cache, the CLI's HOME (its very first start in a
    // fresh HOME takes seconds), Node's JIT. Also checks launch parity. The store scenario drives no claude.
    const drivesClaude = options.scenarios.some((name) => name !== 'store');
    const warmRaw = drivesClaude ? await runRawTurns(common) : null;
    const warmTether = drivesClaude ? await runTetherTurns({ ...common, inspectChild: true }) : null;
    const launchParity = warmTether
      ? compareLaunch(warmTether.launch, environment)
      : { checked: false, note: 'not checked: no scenario drove claude' };
    if (warmTether)
      console.log(
        `bench: warm-up cold turn raw ${fmt(warmRaw.turns[0].turnMs)} ms, Tether ${fmt(warmTether.turns[0].turnMs)} ms; launch parity ${launchParity.identical ? `identical${launchParity.ignored?.length ? ` (apart from ${launchParity.ignored.join(', ')})` : ''}` : JSON.stringify(launchParity.differences ?? launchParity.note)}`,
      );

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
        load: { sessions: options.loadSessions, turns: options.loadTurns, processes: options.loadProcesses },
        acpRepetitions: options.acpRepetitions,
        peerRepetitions: options.peerRepetitions,
        daemon: {
          sessions: options.daemonSessions,
          repetitions: options.daemonRepetitions,
          deltas: options.daemonDeltas,
          subscribers: options.subscribers,
          fanoutDeltas: options.fanoutDeltas,
          fanoutTurns: options.fanoutTurns,
          fanoutPacedMs: options.fanoutPacedMs,
          fanoutPacedTurns: options.fanoutPacedTurns,
        },
        output: options.output,
        waitForQuiet: options.wait,
      },
      machine,
      claudePath,
      launchParity,
      loadAverage: { start: loadAtStart, end: NaN },
      store: null,
      warmUp: warmTether && {
        raw: warmRaw,
        tether: {
          ...warmTether,
          launch: undefined,
          turns: warmTether.turns.map((turn) => ({ ...turn, batchSizes: undefined })),
        },
      },
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
    if (['interrupt', 'lifecycle', 'crash', 'memory', 'soak'].some(selected))
      report.lifecycle = await runLifecycleScenarios({
        options,
        context: { claudePath, environment, workspace, apiPid: api.pid },
        selected,
      });
    if (selected('transports'))
      report.transports = await runTransportScenario({
        options,
        context: { claudePath, environment, workspace, prompt, apiPid: api.pid },
      });
    if (selected('daemon'))
      report.daemon = await runDaemonScenario({
        options,
        context: { claudePath, environment, workspace, apiPid: api.pid },
      });
    if (selected('load'))
      report.load = await measureLoad(
        { claudePath, environment, workspace },
        {
          sessions: options.loadSessions,
          turns: options.loadTurns,
          maxProcesses: options.loadProcesses,
          repoRoot,
          log: (line) => console.log(line),
        },
      );
    if (selected('acp'))
      report.acp = await runAcpScenario({
        options,
        context: { claudePath, environment, workspace, prompt, apiPid: api.pid, root },
      });
    if (selected('peers'))
      report.peers = await runPeerScenario({
        options,
        context: { claudePath, environment, workspace, prompt, apiPid: api.pid, root },
      });
    if (selected('sessions'))
      report.sessions = await measureOpenSessions(
        { claudePath, environment, workspace },
        {
          sessions: options.openSessions,
          turns: options.openTurns,
          maxProcesses: options.openProcesses,
          resumes: options.openResumes,
          ...(options.openAgentNice === undefined ? {} : { agentNice: options.openAgentNice }),
          repoRoot,
          log: (line) => console.log(line),
        },
      );
    if (selected('store'))
      report.storeScaleOut = await measureStoreScaleOut({
        repoRoot,
        log: (line) => console.log(line),
        gate: quietGate(options, { perPairMs: lifecycleQuietWaitPerPairMs, totalMs: lifecycleQuietWaitTotalMs }),
      });
    report.loadAverage.end = loadAverage();
    report.durationSeconds = round((Date.now() - started) / 1000, 1);
    await mkdir(path.dirname(options.output), { recursive: true });
    await writeFile(options.output, `${JSON.stringify(report, null, 2)}\n`);
    printReport(report, { target, quietCores });
    if (report.peers) console.log(`\n${peerTableLines(report.peers).join('\n')}`);
    if (report.storeScaleOut) console.log(storeScaleOutLines(report.storeScaleOut).join('\n'));
    if (report.sessions) console.log(openSessionsReportLines(report.sessions).join('\n'));
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
      quietWaitMs += await waitForQuiet({
        thresholdCores: quietCores,
        maxMs: Math.min(quietWaitPerPairMs, quietWaitTotalMs - quietWaitMs),
        ownPids: [api.pid],
      });
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
  // Per 1,000 of the agent's deltas, as the raw leg of the pair counted them (the same fake model):
  // Tether joins a block's waiting deltas, so its event count is lower.
  const per1k = (turn, pair) => (turn.cpuMs / Math.max(1, warm(pair.raw).deltas)) * 1000;
  const batches = pairs.flatMap((pair) => warm(pair.tether).batchSizes);
  return {
    all: metrics(pairs),
    quiet: {
      thresholdCores: quietCores,
      pairs: quietPairs.length,
      metrics: quietPairs.length >= 3 ? metrics(quietPairs) : null,
    },
    otherLoadCores: summarize(pairs.map((pair) => pair.otherLoadCores)),
    quietWaitMs,
    cpu: {
      benchPer1k: {
        raw: median(pairs.map((pair) => per1k(warm(pair.raw), pair))),
        tether: median(pairs.map((pair) => per1k(warm(pair.tether), pair))),
      },
      tetherOverheadPer1k: median(pairs.map((pair) => per1k(warm(pair.tether), pair) - per1k(warm(pair.raw), pair))),
      coldBench: {
        raw: median(pairs.map((pair) => pair.raw.turns[0].cpuMs)),
        tether: median(pairs.map((pair) => pair.tether.turns[0].cpuMs)),
      },
      claude: {
        raw: median(pairs.map((pair) => warm(pair.raw).childCpuMs)),
        tether: median(pairs.map((pair) => warm(pair.tether).childCpuMs)),
      },
      api: {
        raw: median(pairs.map((pair) => warm(pair.raw).apiCpuMs)),
        tether: median(pairs.map((pair) => warm(pair.tether).apiCpuMs)),
      },
    },
    counts: {
      rawDeltas: median(pairs.map((pair) => warm(pair.raw).deltas)),
      rawTextChars: median(pairs.map((pair) => warm(pair.raw).textChars)),
      tetherDeltaEvents: median(pairs.map((pair) => warm(pair.tether).deltaEvents)),
      tetherTextChars: median(pairs.map((pair) => warm(pair.tether).textChars)),
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
    pairs: pairs.map((pair) => ({
      ...pair,
      tether: { ...pair.tether, turns: pair.tether.turns.map((turn) => ({ ...turn, batchSizes: undefined })) },
    })),
  };
}

/** Paired b/a over legs `a` and `b` of each pair, each leg's figure picked by its own function. */
function comparePaired(pairs, pickA, pickB, legA = 'raw', legB = 'tether') {
  const usable = pairs.filter((pair) => Number.isFinite(pickA(pair[legA])) && Number.isFinite(pickB(pair[legB])));
  const ratios = usable.map((pair) => pickB(pair[legB]) / pickA(pair[legA]));
  return {
    raw: summarize(usable.map((pair) => pickA(pair[legA]))),
    tether: summarize(usable.map((pair) => pickB(pair[legB]))),
    ratio: summarizeRatios(ratios),
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
      gate.waitedMs += await waitForQuiet({
        thresholdCores: quietCores,
        maxMs: Math.min(perPairMs, totalMs - gate.waitedMs),
        ownPids,
      });
    },
  };
  return gate;
}

async function runLifecycleScenarios({ options, context, selected }) {
  const gate = quietGate(options, { perPairMs: lifecycleQuietWaitPerPairMs, totalMs: lifecycleQuietWaitTotalMs });
  const log = (line) => console.log(line);
  const repetitions = options.lifecycleRepetitions;
  const result = { quietWaitMs: 0 };
  const quietSummary = (pairs) => ({
    quietPairs: pairs.filter((pair) => pair.quiet).length,
    otherLoadCores: summarize(pairs.map((pair) => pair.otherLoadCores)),
  });

  if (selected('interrupt')) {
    const { pairs } = await measureInterrupts(context, { repetitions, gate, log });
    result.interrupt = {
      ...quietSummary(pairs),
      completed: comparePaired(
        pairs,
        (leg) => leg.completedMs,
        (leg) => leg.completedMs,
      ),
      acknowledged: comparePaired(
        pairs,
        (leg) => leg.ackMs,
        (leg) => leg.ackMs,
      ),
      firstDelta: comparePaired(
        pairs,
        (leg) => leg.firstDeltaMs,
        (leg) => leg.firstDeltaMs,
      ),
      requestedEvent: summarize(pairs.map((pair) => pair.tether.requestedEventMs)),
      providerCompleted: comparePaired(
        pairs,
        (leg) => leg.completedMs,
        (leg) => leg.providerCompletedMs,
      ),
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
      coldFirstDelta: comparePaired(
        pairs,
        (leg) => leg.coldFirstDeltaMs,
        (leg) => leg.coldFirstDeltaMs,
      ),
      coldTurn: comparePaired(
        pairs,
        (leg) => leg.coldTurnMs,
        (leg) => leg.coldTurnMs,
      ),
      warmFirstDelta: comparePaired(
        pairs,
        (leg) => leg.warmFirstDeltaMs,
        (leg) => leg.warmFirstDeltaMs,
      ),
      warmTurn: comparePaired(
        pairs,
        (leg) => leg.warmTurnMs,
        (leg) => leg.warmTurnMs,
      ),
      warmCompletedLag: summarize(pairs.map((pair) => pair.tether.warmCompletedLagMs)),
      openSession: summarize(pairs.map((pair) => pair.tether.openSessionMs)),
      spawnAfter: {
        raw: summarize(pairs.map((pair) => pair.raw.spawnReturnedMs)),
        tether: summarize(pairs.map((pair) => pair.tether.spawnEmittedMs)),
      },
      idleClose: comparePaired(
        idle,
        (leg) => leg.closeMs,
        (leg) => leg.closeMs,
      ),
      idleCloseStoppedEvent: summarize(idle.map((pair) => pair.tether.processStoppedEventMs)),
      // Where the poll caught the death (it cannot when the host handles the exit without an idle tick between).
      idleCloseAfterDeath: {
        raw: summarize(idle.map((pair) => pair.raw.closeMs - pair.raw.diedMs)),
        tether: summarize(idle.map((pair) => pair.tether.closeMs - pair.tether.diedMs)),
      },
      busyClose: comparePaired(
        busy,
        (leg) => leg.closeMs,
        (leg) => leg.closeMs,
      ),
      busyCloseAfterDeath: {
        raw: summarize(busy.map((pair) => pair.raw.closeMs - pair.raw.diedMs)),
        tether: summarize(busy.map((pair) => pair.tether.closeMs - pair.tether.diedMs)),
      },
      busyCloseSigterm: summarize(busy.map((pair) => pair.tether.sigtermMs)),
      busyCloseRunCompleted: summarize(busy.map((pair) => pair.tether.runCompletedMs)),
      busyCloseOutcomes: [...new Set(busy.map((pair) => pair.tether.runOutcome))],
      processGoneAtResolve: pairs.filter((pair) => pair.tether.processGoneAtResolve === true).length,
      rawExitCodes: {
        idle: [...new Set(idle.map((pair) => pair.raw.exit))],
        busy: [...new Set(busy.map((pair) => pair.raw.exit))],
      },
      stoppedReasons: [...new Set(pairs.map((pair) => pair.tether.processStoppedReason))],
      ...(warmPool
        ? {
            warmPoolFirstDelta: comparePaired(
              pairs,
              (leg) => leg.coldFirstDeltaMs,
              (leg) => leg.coldFirstDeltaMs,
              'raw',
              'warmPool',
            ),
            warmPoolVsTetherCold: comparePaired(
              pairs,
              (leg) => leg.coldFirstDeltaMs,
              (leg) => leg.coldFirstDeltaMs,
              'tether',
              'warmPool',
            ),
            warmPoolTurn: comparePaired(
              pairs,
              (leg) => leg.coldTurnMs,
              (leg) => leg.coldTurnMs,
              'raw',
              'warmPool',
            ),
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
      afterDeath: {
        raw: summarize(pairs.map((pair) => pair.raw.closedMs - pair.raw.diedMs)),
        tether: summarize(pairs.map((pair) => pair.tether.completedMs - pair.tether.diedMs)),
      },
      versusRawClose: comparePaired(
        pairs,
        (leg) => leg.closedMs,
        (leg) => leg.completedMs,
      ),
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

/** The transport, acp and peers scenarios: paired legs behind the same quiet gate, then their summary. */
async function runPairedScenario({ options, context, measure, summarizeResult, repetitions, settings = {} }) {
  const gate = quietGate(options, { perPairMs: lifecycleQuietWaitPerPairMs, totalMs: transportQuietWaitTotalMs });
  const result = await measure(context, { repetitions, gate, log: (line) => console.log(line), repoRoot, ...settings });
  return { ...summarizeResult(result), quietWaitMs: gate.waitedMs };
}

const runTransportScenario = ({ options, context }) =>
  runPairedScenario({
    options,
    context,
    measure: measureTransports,
    summarizeResult: summarizeTransports,
    repetitions: options.transportRepetitions,
  });

const runAcpScenario = ({ options, context }) =>
  runPairedScenario({
    options,
    context,
    measure: measureAcp,
    summarizeResult: summarizeAcp,
    repetitions: options.acpRepetitions,
  });

const runPeerScenario = ({ options, context }) =>
  runPairedScenario({
    options,
    context,
    measure: measurePeers,
    summarizeResult: summarizePeers,
    repetitions: options.peerRepetitions,
    settings: { warmPool: options.warmPool ?? warmPoolAvailable(repoRoot) },
  });

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
  return { ...summarizeDaemon(result), quietWaitMs: gate.waitedMs };
}

main().catch((error) => {
  console.error(`bench: failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  process.exitCode = 1;
});
