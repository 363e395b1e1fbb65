/**
 * The transport scenario: the main scenario's scripted turn (a cold then a warm turn of 2,000
 * deltas, bench/lib/tether-turn.mjs) through Tether with the Claude provider's 'cli' transport and
 * with its 'sdk' transport (the Agent SDK's query() in the host), in pairs whose order alternates.
 *
 * Each leg is a fresh host process (bench/transport-host.mjs), not the bench process: the SDK stays
 * loaded once imported, so in one process the host memory of the two transports could not be told
 * apart, and a host's first sdk session pays the SDK's import, which belongs in open → first delta.
 * The agent processes (everything under the host: the claude CLI, spawned by Tether's supervision
 * in both transports) are measured apart from the host.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { killLeftoverProcesses } from './claude-processes.mjs';
import { runPairs } from './paired-runs.mjs';
import { median, summarize, summarizeRatios } from './stats.mjs';

export const transports = ['cli', 'sdk'];
/** How long a host may take to exit by itself after printing its result (an open handle would keep it). */
const exitGraceMs = 10_000;

/** One leg: a fresh host process running both turns with `transport`; its JSON line, plus how it ended. */
export async function runHost(context, transport, { repoRoot, inspectChild = false, timeoutMs = 120_000 }) {
  const { claudePath, environment, workspace, prompt, apiPid } = context;
  const started = performance.now();
  const child = spawn(process.execPath, [path.join(repoRoot, 'bench', 'transport-host.mjs')], {
    cwd: repoRoot,
    env: {
      ...process.env,
      BENCH_TRANSPORT_CONFIG: JSON.stringify({
        transport,
        claudePath,
        environment,
        workspace,
        prompt,
        apiPid,
        inspectChild,
      }),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  // 'close' comes after the exit and after stdout has ended, so a printed line has been seen by then.
  const closed = new Promise((resolve) =>
    child.once('close', (code, signal) => resolve({ code, signal, at: performance.now() })),
  );
  let line;
  let printedAt;
  const printed = new Promise((resolve) =>
    createInterface({ input: child.stdout }).once('line', (text) => {
      line = text;
      printedAt = performance.now();
      resolve();
    }),
  );
  let timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  await Promise.race([closed, printed]);
  clearTimeout(timer);
  let lingered = false;
  // The result is out; a host still alive after the grace keeps something open after runtime.shutdown().
  timer = setTimeout(() => {
    lingered = true;
    child.kill('SIGKILL');
  }, exitGraceMs);
  const exit = await closed;
  clearTimeout(timer);
  if (line === undefined || (exit.code !== 0 && !lingered))
    throw new Error(
      `transport scenario: the ${transport} host ended with ${exit.signal ?? `code ${exit.code}`}${line === undefined ? ' and no result' : ''}`,
    );
  return {
    transport,
    ...JSON.parse(line),
    hostMs: printedAt - started,
    exitAfterResultMs: exit.at - printedAt,
    lingered,
  };
}

function describePair(pair, legs) {
  const mib = (kb) => (kb / 1024).toFixed(0);
  const leg = (name) => {
    const { turns, openMs, sample } = pair[name];
    return `${name} open->1st ${(openMs + turns[0].firstDeltaMs).toFixed(0)} cold ${turns[0].turnMs.toFixed(0)} warm ${turns[1].turnMs.toFixed(0)} ms host ${mib(sample.hostRssKb)} agent ${mib(sample.agentRssKb)} MiB`;
  };
  return `${legs.map(leg).join('  ')}  other load ${pair.otherLoadCores.toFixed(2)}`;
}

export async function measureTransports(context, { repetitions, gate, log, repoRoot }) {
  const home = context.environment.HOME;
  // Warm-up (not counted): the page cache for the SDK's files, and each transport's launch for the record.
  const warmUp = {};
  for (const transport of transports)
    warmUp[transport] = await runHost(context, transport, { repoRoot, inspectChild: true });
  let leftoverProcesses = 0;
  const pairs = await runPairs({
    legs: transports,
    repetitions,
    gate,
    label: 'transports',
    log,
    describePair,
    run: async (transport) => {
      const leg = await runHost(context, transport, { repoRoot });
      leg.leftover = await killLeftoverProcesses(home);
      leftoverProcesses += leg.leftover;
      return leg;
    },
  });
  return { pairs, warmUp, leftoverProcesses };
}

/** Each transport's distribution of one figure and the paired ratios sdk/cli (median with its 95 % bootstrap CI). */
function paired(pairs, pick) {
  const usable = pairs.filter((pair) => Number.isFinite(pick(pair.cli)) && Number.isFinite(pick(pair.sdk)));
  return {
    cli: summarize(usable.map((pair) => pick(pair.cli))),
    sdk: summarize(usable.map((pair) => pick(pair.sdk))),
    ratio: summarizeRatios(usable.map((pair) => pick(pair.sdk) / pick(pair.cli))),
  };
}

/** argv and environment of the claude child the SDK launched, against the cli transport's. */
function launchDifferences(warmUp) {
  const { cli, sdk } = { cli: warmUp.cli.launch, sdk: warmUp.sdk.launch };
  if (!cli?.argv || !sdk?.argv) return { checked: false };
  // The session id is fresh per leg (the SDK passes it as --session-id=<uuid>), and the marker random per process.
  const normalise = (argv) =>
    argv
      .slice(1)
      .map((value, index, list) =>
        list[index - 1] === '--session-id' ? '<uuid>' : value.replace(/^--session-id=.*/, '--session-id=<uuid>'),
      );
  const changed = (a, b) =>
    Object.keys({ ...a, ...b })
      .filter((name) => name !== 'TETHER_PROCESS_MARKER' && a[name] !== b[name])
      .sort();
  // Order and `--flag=value` against `--flag value` aside: which arguments only one of them passes.
  const tokens = (argv) =>
    argv.flatMap((value) =>
      /^--[^=]+=/.test(value) ? [value.slice(0, value.indexOf('=')), value.slice(value.indexOf('=') + 1)] : [value],
    );
  const [cliArgv, sdkArgv] = [normalise(cli.argv), normalise(sdk.argv)];
  const only = (a, b) => tokens(a).filter((token) => !tokens(b).includes(token));
  return {
    checked: true,
    cliArgv,
    sdkArgv,
    onlyCli: only(cliArgv, sdkArgv),
    onlySdk: only(sdkArgv, cliArgv),
    environmentChanged: changed(cli.env ?? {}, sdk.env ?? {}),
  };
}

export function summarizeTransports({ pairs, warmUp, leftoverProcesses }) {
  const cold = (leg) => leg.turns[0];
  const warm = (leg) => leg.turns[1];
  const each = (pick) =>
    Object.fromEntries(transports.map((transport) => [transport, median(pairs.map((pair) => pick(pair[transport])))]));
  return {
    repetitions: pairs.length,
    quietPairs: pairs.filter((pair) => pair.quiet).length,
    otherLoadCores: summarize(pairs.map((pair) => pair.otherLoadCores)),
    coldTurn: paired(pairs, (leg) => cold(leg).turnMs),
    openFirstDelta: paired(pairs, (leg) => leg.openMs + cold(leg).firstDeltaMs),
    coldFirstDelta: paired(pairs, (leg) => cold(leg).firstDeltaMs),
    openSession: paired(pairs, (leg) => leg.openMs),
    warmTurn: paired(pairs, (leg) => warm(leg).turnMs),
    warmFirstDelta: paired(pairs, (leg) => warm(leg).firstDeltaMs),
    hostRss: paired(pairs, (leg) => leg.sample.hostRssKb),
    hostPeak: paired(pairs, (leg) => leg.sample.hostHwmKb),
    hostHeap: paired(pairs, (leg) => leg.sample.hostHeapBytes),
    agentRss: paired(pairs, (leg) => leg.sample.agentRssKb),
    agentPeak: paired(pairs, (leg) => leg.sample.agentHwmKb),
    hostCpuCold: paired(pairs, (leg) => cold(leg).cpuMs),
    hostCpuWarm: paired(pairs, (leg) => warm(leg).cpuMs),
    agentCpuWarm: paired(pairs, (leg) => warm(leg).childCpuMs),
    hostBaselineRssKb: each((leg) => leg.sample.baselineRssKb),
    deltaEvents: each((leg) => warm(leg).deltaEvents),
    textChars: each((leg) => warm(leg).textChars),
    delivered: each((leg) => warm(leg).delivered),
    shutdownMs: each((leg) => leg.shutdownMs),
    exitAfterResultMs: each((leg) => leg.exitAfterResultMs),
    lingered: pairs.flatMap((pair) => transports.filter((transport) => pair[transport].lingered)).length,
    agentProcesses: Object.fromEntries(
      transports.map((transport) => [
        transport,
        [...new Set(pairs.flatMap((pair) => pair[transport].sample.agentProcesses))],
      ]),
    ),
    diagnostics: Object.fromEntries(
      transports.map((transport) => [transport, [...new Set(pairs.flatMap((pair) => pair[transport].diagnostics))]]),
    ),
    launch: launchDifferences(warmUp),
    leftoverProcesses,
    pairs,
  };
}
