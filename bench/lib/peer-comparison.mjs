/**
 * The peers scenario: in each round, the raw loop, the Agent SDK's query(), the reference ACP adapter
 * @zed-industries/claude-agent-acp (a child of its leg's host, driven over ACP) and Tether (in-process
 * runtime over SQLite) each drive the same claude binary against the same fake API, one after the
 * other in an order that changes from round to round (paired-runs.mjs), each leg in a fresh host process of its own
 * (bench/peer-leg-host.mjs) so its host CPU and RSS are the driver's alone (the ACP leg's: the host's
 * plus the adapter's). Every leg measures:
 *   cold    open → first delta and → result of a 2,000-delta turn (the process starts on it);
 *   warm    a second 2,000-delta turn on the same process, on its own, and the host's CPU in it;
 *   steady  four more such turns on it: the medians of their times and CPU (a long-running host's turns,
 *           past the first warm turn's unoptimised code); then 25 short turns on it (their medians);
 *   rss     the host process's RSS after the cold turn;
 *   interrupt  right after the first delta of a slow turn → the turn ended: the process's first stop, then
 *           the median of nine more, each after a short turn;
 *   own parts  the short turns and the next stops timed around the CLI as well (stdio-timestamps.mjs):
 *           the host's own part before the line reaches claude and after its result is read; reported
 *           in milliseconds, not as ratios, and not for the ACP leg, whose adapter alone sees claude;
 *   second cold  the host's second session (its first ended; the adapter's stays): open → first delta,
 *           its CLI cold again but the driver's own code already run once;
 *   prewarmed  a new session with a process already started: raw `--await-claim` + claim_session,
 *           the SDK's startup() and prewarm() + claim (folders never seen before), Tether's warm pool;
 *           none for the ACP adapter, which cannot start claude before a session.
 * A fifth leg in the same rounds, the durable floor (the Agent SDK keeping a SQLite log), takes only the
 * short turns and the stops, with their own parts; Tether is also reported as its ratio to it.
 * Every other figure is reported as the paired ratio to the raw loop of the same round, with its 95 % CI.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { killLeftoverProcesses } from './claude-processes.mjs';
import { rawLaunch } from './claude-setup.mjs';
import { withFreshSessionId } from './fresh-session-id.mjs';
import { runPairs } from './paired-runs.mjs';
import { interruptStops } from './peer-turn-timer.mjs';
import { SHORT, SLOW } from './scripted-prompts.mjs';
import { summarize, summarizeRatios } from './stats.mjs';
import { ownPartNames } from './stdio-timestamps.mjs';

export const peerLegs = ['raw', 'sdk', 'acp', 'tether'];
/**
 * Not a peer but a second floor beside the raw loop: the least a durable host does. The Agent SDK with
 * every message committed to SQLite before it is sent or handled (bench/lib/durable-log-legs.mjs), run in
 * the same rounds, takes only the short turns and the stops: the two rows where the commits a durable
 * host must make are a visible part of the turn
 * (docs/decisions/2026-12-03-durable-events-bound-the-short-turn-and-the-stop.md).
 */
const durableFloorLeg = 'sdk-durable';
/** The driver bench/peer-leg-host.mjs runs for a leg, where its name there differs. */
const hostLegOf = { [durableFloorLeg]: 'sdk-durable-short' };
/** Every leg a round runs. */
const roundLegs = [...peerLegs, durableFloorLeg];
const legTimeoutMs = 180_000;

/** One leg in a fresh host (bench/peer-leg-host.mjs): its context in on stdin, its result back as one JSON line. */
export async function runLegProcess(leg, context, repoRoot) {
  const child = spawn(process.execPath, [path.join(repoRoot, 'bench', 'peer-leg-host.mjs')], {
    cwd: repoRoot,
    env: process.env,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk) => {
    stderr = (stderr + chunk).slice(-4000);
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), legTimeoutMs);
  const line = new Promise((resolve) => createInterface({ input: child.stdout }).once('line', resolve));
  const exit = new Promise((resolve) => child.once('close', resolve));
  child.stdin.end(JSON.stringify({ leg, context }));
  const code = await exit;
  clearTimeout(timer);
  if (code !== 0) throw new Error(`the ${leg} peer leg failed (exit ${code}): ${stderr.trim().slice(-1500)}`);
  return JSON.parse(await line);
}

function describePair(pair) {
  const ms = (value) => (Number.isFinite(value) ? value.toFixed(0) : '-');
  const leg = (name) => {
    const result = pair[name];
    let prewarmed = ` prewarmed ${ms(result.prewarmed?.firstDeltaMs)}`;
    if (name === 'sdk')
      prewarmed = ` startup ${ms(result.startup.firstDeltaMs)} prewarm ${ms(result.prewarmed.firstDeltaMs)}`;
    if (name === 'acp') prewarmed = '';
    return `${name} cold ${ms(result.cold.firstDeltaMs)}/${ms(result.cold.turnMs)} warm ${ms(result.warm.turnMs)} (CPU ${ms(result.warm.cpuMs)}) steady ${ms(result.steady.turnMs)} (CPU ${ms(result.steady.cpuMs)}) short ${ms(result.warmShort.turnMs)} RSS ${ms(result.rssAfterOneTurnKb / 1024)} MiB int ${ms(result.firstInterruptMs)}/${ms(result.interruptMs)}${prewarmed}`;
  };
  const floor = pair[durableFloorLeg];
  return `${peerLegs.map(leg).join('  ')}  ${durableFloorLeg} short ${ms(floor.warmShort.turnMs)} int ${ms(floor.firstInterruptMs)}/${ms(floor.interruptMs)}  other load ${pair.otherLoadCores.toFixed(2)}`;
}

export async function measurePeers(context, { repetitions, gate, log, repoRoot, warmPool }) {
  const legContext = {
    claudePath: context.claudePath,
    environment: context.environment,
    ...(({ argv, env }) => ({ rawArgv: argv, rawEnv: env }))(
      rawLaunch({ environment: context.environment, providerSessionId: '00000000-0000-4000-8000-000000000000' }),
    ),
    workspace: context.workspace,
    root: context.root,
    apiPid: context.apiPid,
    prompt: context.prompt,
    short: SHORT,
    slow: SLOW,
    warmPool,
  };
  const run = async (leg) => {
    // A fixed --session-id would collide from leg to leg: each raw launch gets its own.
    const result = await runLegProcess(
      hostLegOf[leg] ?? leg,
      { ...legContext, rawArgv: withFreshSessionId(legContext.rawArgv) },
      repoRoot,
    );
    result.leftover = await killLeftoverProcesses(context.environment.HOME);
    return result;
  };
  const warmUp = {};
  for (const leg of roundLegs) warmUp[leg] = await run(leg);
  log(`bench: peers warm-up ${describePair({ ...warmUp, otherLoadCores: Number.NaN })}`);
  const pairs = await runPairs({ legs: roundLegs, repetitions, gate, label: 'peers', log, describePair, run });
  return { pairs, warmUp };
}

/** One figure: each driver's median and its paired ratio to the raw loop of the same round (95 % CI). */
function toRaw(pairs, pickRaw, picks) {
  const figure = { raw: summarize(pairs.map((pair) => pickRaw(pair.raw))) };
  for (const [name, pick] of Object.entries(picks)) {
    const [leg] = name.split(':');
    const usable = pairs.filter((pair) => Number.isFinite(pick(pair[leg])) && Number.isFinite(pickRaw(pair.raw)));
    figure[name] = {
      ...summarize(usable.map((pair) => pick(pair[leg]))),
      ratio: summarizeRatios(usable.map((pair) => pick(pair[leg]) / pickRaw(pair.raw))),
    };
  }
  return figure;
}

const same = (pick) => ({ sdk: pick, acp: pick, tether: pick });
/** As `same`, and the durable floor's figure too: the rows its leg measures. */
const withFloor = (pick) => ({ ...same(pick), [durableFloorLeg]: pick });

/** Tether's paired ratio to the durable floor of the same round, with its 95 % CI. */
function toDurableFloor(pairs, pick) {
  return summarizeRatios(pairs.map((pair) => pick(pair.tether) / pick(pair[durableFloorLeg])).filter(Number.isFinite));
}

/**
 * Per 1,000 of the agent's deltas: every leg streamed as many as the raw leg of its round counted
 * (the same fake model), whatever number of events carried them (Tether joins a block's deltas
 * that wait for the same commit, so its event count is lower). The ACP leg's CPU is its host's plus
 * the adapter process's.
 */
const per1k = (leg) => (leg.warm.cpuMs / Math.max(1, leg.warm.agentDeltas)) * 1000;
const steadyPer1k = (leg) => (leg.steady.cpuMs / Math.max(1, leg.steady.agentDeltas)) * 1000;
const withAgentDeltas = (pair) => ({
  ...pair,
  ...Object.fromEntries(
    peerLegs.map((leg) => [
      leg,
      {
        ...pair[leg],
        warm: { ...pair[leg].warm, agentDeltas: pair.raw.warm.deltas },
        steady: { ...pair[leg].steady, agentDeltas: pair.raw.steady.deltas },
      },
    ]),
  ),
});

export function summarizePeers({ pairs, warmUp }) {
  return {
    repetitions: pairs.length,
    quietPairs: pairs.filter((pair) => pair.quiet).length,
    otherLoadCores: summarize(pairs.map((pair) => pair.otherLoadCores)),
    coldFirstDelta: toRaw(
      pairs,
      (leg) => leg.cold.firstDeltaMs,
      same((leg) => leg.cold.firstDeltaMs),
    ),
    secondColdFirstDelta: toRaw(
      pairs,
      (leg) => leg.secondCold.firstDeltaMs,
      same((leg) => leg.secondCold.firstDeltaMs),
    ),
    coldTurn: toRaw(
      pairs,
      (leg) => leg.cold.turnMs,
      same((leg) => leg.cold.turnMs),
    ),
    warmTurn: toRaw(
      pairs,
      (leg) => leg.warm.turnMs,
      same((leg) => leg.warm.turnMs),
    ),
    steadyWarmTurn: toRaw(
      pairs,
      (leg) => leg.steady.turnMs,
      same((leg) => leg.steady.turnMs),
    ),
    steadyCpuPer1kDeltas: toRaw(pairs.map(withAgentDeltas), steadyPer1k, same(steadyPer1k)),
    warmShortTurn: toRaw(
      pairs,
      (leg) => leg.warmShort.turnMs,
      withFloor((leg) => leg.warmShort.turnMs),
    ),
    cpuPer1kDeltas: toRaw(pairs.map(withAgentDeltas), per1k, same(per1k)),
    rssAfterOneTurnMb: toRaw(
      pairs,
      (leg) => leg.rssAfterOneTurnKb / 1024,
      same((leg) => leg.rssAfterOneTurnKb / 1024),
    ),
    prewarmedFirstDelta: toRaw(pairs, (leg) => leg.prewarmed.firstDeltaMs, {
      'sdk:startup': (leg) => leg.startup.firstDeltaMs,
      'sdk:prewarm': (leg) => leg.prewarmed.firstDeltaMs,
      tether: (leg) => leg.prewarmed?.firstDeltaMs ?? Number.NaN,
    }),
    firstInterrupt: toRaw(
      pairs,
      (leg) => leg.firstInterruptMs,
      withFloor((leg) => leg.firstInterruptMs),
    ),
    interrupt: toRaw(
      pairs,
      (leg) => leg.interruptMs,
      withFloor((leg) => leg.interruptMs),
    ),
    tetherToDurableFloor: {
      warmShortTurn: toDurableFloor(pairs, (leg) => leg.warmShort.turnMs),
      firstInterrupt: toDurableFloor(pairs, (leg) => leg.firstInterruptMs),
      interrupt: toDurableFloor(pairs, (leg) => leg.interruptMs),
    },
    // Milliseconds, not ratios: a host's own part is a few tenths of a millisecond, the raw loop's less.
    ownParts: Object.fromEntries(
      ownPartLegs.map((leg) => [
        leg,
        Object.fromEntries(
          ownPartNames.map((name) => [name, summarize(pairs.map((pair) => pair[leg].ownParts[name]))]),
        ),
      ]),
    ),
    warmDeltas: Object.fromEntries(
      peerLegs.map((leg) => [leg, [...new Set(pairs.map((pair) => pair[leg].warm.deltas))]]),
    ),
    sdkArgv: warmUp.sdk.argv,
    sdkClaims: [...new Set(pairs.map((pair) => pair.sdk.claim))],
    acpArgv: warmUp.acp.argv,
    acpAdapterStartMs: summarize(pairs.map((pair) => pair.acp.adapterStartMs)),
    acpSessionNewMs: summarize(pairs.map((pair) => pair.acp.newSessionMs)),
    acpWarmCpuMs: {
      host: summarize(pairs.map((pair) => pair.acp.warm.hostCpuMs)),
      adapter: summarize(pairs.map((pair) => pair.acp.warm.adapterCpuMs)),
    },
    acpRssMb: {
      host: summarize(pairs.map((pair) => pair.acp.hostRssKb / 1024)),
      adapter: summarize(pairs.map((pair) => pair.acp.adapterRssKb / 1024)),
    },
    acpExits: [...new Set(pairs.map((pair) => pair.acp.adapterExit))],
    leftoverProcesses: pairs.reduce(
      (sum, pair) => sum + roundLegs.reduce((legs, leg) => legs + pair[leg].leftover, 0),
      0,
    ),
    warmUp,
    pairs,
  };
}

/**
 * The drivers whose own part is timed around the CLI: the ACP leg's host talks ACP to the adapter,
 * which alone sees claude's stdio.
 */
const ownPartLegs = ['raw', 'sdk', 'tether', durableFloorLeg];

/** A driver's own part of a short turn or a stop: before + after (the CLI's part), medians over rounds, ms. */
function ownPartCell(ownParts, leg, kind) {
  const part = (name) => ownParts[leg][`${kind}${name}`].median;
  return `${part('Before').toFixed(3)} + ${part('After').toFixed(3)} (claude ${part('Cli').toFixed(1)})`;
}

/** A row of each driver's own part of a short turn or a stop. */
function ownPartRow(label, kind, ownParts) {
  const cell = (leg) => ownPartCell(ownParts, leg, kind);
  return `| own part of a ${label}: before + after the CLI's (ms) | ${cell('raw')} | ${cell('sdk')} | — | ${cell('tether')} |`;
}

/** The table the issue asks for: the raw loop's median, then each driver's median ratio [95 % CI]. */
export function peerTableLines(summary) {
  const number = (value, digits = 0) => (Number.isFinite(value) ? value.toFixed(digits) : '-');
  const ratioCell = (ratio) => `×${number(ratio.median, 2)} [${number(ratio.ci95[0], 2)}–${number(ratio.ci95[1], 2)}]`;
  const cell = (entry, unit) => (entry ? `${number(entry.median)} ${unit} ${ratioCell(entry.ratio)}` : '-');
  const floor = (figure) => cell(figure[durableFloorLeg], 'ms');
  const toFloor = summary.tetherToDurableFloor;
  // A driver with no such figure (the ACP adapter has no prewarmed session) gets "—".
  const row = (label, figure, unit, sdkKeys = ['sdk']) =>
    `| ${label} | ${number(figure.raw.median)} ${unit} | ${sdkKeys.map((key) => `${key === 'sdk' ? '' : `${key.split(':')[1]}: `}${cell(figure[key], unit)}`).join('; ')} | ${figure.acp ? cell(figure.acp, unit) : '—'} | ${cell(figure.tether, unit)} |`;
  return [
    `peers: ${summary.repetitions} rounds (${summary.quietPairs} quiet); median, then ×ratio to the raw loop of the same round [95 % CI]`,
    '| | raw loop | Agent SDK query() | claude-agent-acp (host + adapter) | Tether (runtime + SQLite, in-process) |',
    '|---|---|---|---|---|',
    row('warm 2,000-delta turn, submit → result', summary.warmTurn, 'ms'),
    row('host CPU per 1,000 deltas (warm turn)', summary.cpuPer1kDeltas, 'ms'),
    row('steady warm 2,000-delta turn (median of the next 4)', summary.steadyWarmTurn, 'ms'),
    row('host CPU per 1,000 deltas (steady turns)', summary.steadyCpuPer1kDeltas, 'ms'),
    row('cold: open → first delta', summary.coldFirstDelta, 'ms'),
    row("cold, the host's second session: open → first delta", summary.secondColdFirstDelta, 'ms'),
    row('warm short turn, submit → result', summary.warmShortTurn, 'ms'),
    row('cold: open → result (2,000 deltas)', summary.coldTurn, 'ms'),
    row('new session, prewarmed: open → first delta', summary.prewarmedFirstDelta, 'ms', [
      'sdk:startup',
      'sdk:prewarm',
    ]),
    row('host RSS after one turn', summary.rssAfterOneTurnMb, 'MB'),
    row("interrupt → turn ended, the process's first stop", summary.firstInterrupt, 'ms'),
    row(`interrupt → turn ended (median of the next ${interruptStops} stops)`, summary.interrupt, 'ms'),
    ownPartRow('short turn', 'turn', summary.ownParts),
    ownPartRow('stop', 'stop', summary.ownParts),
    `durable floor (the Agent SDK, every message committed to SQLite before it is sent or handled), ×ratio to the raw loop: warm short turn ${floor(summary.warmShortTurn)}; the process's first stop ${floor(summary.firstInterrupt)}; the next stops ${floor(summary.interrupt)}; own part of a short turn ${ownPartCell(summary.ownParts, durableFloorLeg, 'turn')}, of a stop ${ownPartCell(summary.ownParts, durableFloorLeg, 'stop')} ms`,
    `Tether, ×ratio to the durable floor of the same round: warm short turn ${ratioCell(toFloor.warmShortTurn)}; the process's first stop ${ratioCell(toFloor.firstInterrupt)}; the next stops ${ratioCell(toFloor.interrupt)}`,
    `claude-agent-acp: adapter spawn → initialize answered ${number(summary.acpAdapterStartMs.median)} ms (before the clock), session/new ${number(summary.acpSessionNewMs.median)} ms; warm-turn CPU host ${number(summary.acpWarmCpuMs.host.median)} + adapter ${number(summary.acpWarmCpuMs.adapter.median)} ms; RSS host ${number(summary.acpRssMb.host.median)} + adapter ${number(summary.acpRssMb.adapter.median)} MB; chunks per warm turn ${summary.warmDeltas.acp.join('/')}; adapter exits ${summary.acpExits.join('/')}`,
    `claude-agent-acp's claude argv: ${(summary.acpArgv ?? []).join(' ')}`,
  ];
}
