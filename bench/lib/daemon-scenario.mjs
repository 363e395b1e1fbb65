/**
 * The daemon scenario: Tether served by `startDaemon` in its own process (bench/daemon-server.mjs)
 * against the same runtime in the bench process.
 *
 * 1. Turn time, concurrent sessions: N sessions (default 20) each run a cold turn (the CLI starts on
 *    the first turn) and then a warm 2nd turn, all N turns of a round submitted at once. Daemon leg:
 *    `@tether/client` (submitTurn over HTTP; one SSE subscription per session); per session
 *    submitTurn called → `run.completed` received by that subscription. In-process leg: a runtime
 *    over SQLite in the bench process, `runtime.submitTurn` → `run.completed` delivered to a
 *    `runtime.subscribe` consumer. Same provider settings (explicit environment, maxProcesses N),
 *    same fake API. Legs alternate per repetition; per leg p50/p99 over its N turns.
 * 2. Fan-out: one session in a fresh daemon with M subscribers (default 100), a turn of D deltas
 *    (default 500): for every (event × subscriber), receipt in the bench process minus the moment
 *    the daemon published the event, both on CLOCK_MONOTONIC (process.hrtime: one clock for every
 *    process of the host, ns resolution), publish stamped inside the daemon process and fetched
 *    over IPC after the turn. An IPC ping-pong checks that the two processes read the same clock.
 * 3. Memory: the daemon process's VmRSS / VmHWM, the claude processes' RSS summed separately.
 */
import { killLeftoverProcesses } from './claude-processes.mjs';
import { measureFanout } from './daemon-fan-out.mjs';
import { daemonLeg, inProcessLeg, roundStats } from './daemon-turn-time.mjs';
import { runPairs } from './paired-runs.mjs';
import { processesWithEnvironment } from './proc.mjs';

export { summarizeDaemon } from './daemon-summary.mjs';

/** The inProcess and daemon legs' round p50/p99, with the daemon's memory and its CLIs'. */
function describePair(pair) {
  const line = (leg) => {
    const cold = roundStats(pair[leg].cold);
    const warm = roundStats(pair[leg].warm);
    return `${leg} cold p50 ${cold.p50.toFixed(0)} p99 ${cold.p99.toFixed(0)} warm p50 ${warm.p50.toFixed(0)} p99 ${warm.p99.toFixed(0)} ms`;
  };
  return (
    `${line('inProcess')}  ${line('daemon')}  daemon RSS ${(pair.daemon.daemon.rssKb / 1024).toFixed(1)} MiB, ` +
    `claude ${pair.daemon.claude.count} x ${(pair.daemon.claude.rssKb / 1024 / Math.max(1, pair.daemon.claude.count)).toFixed(0)} MiB; other load ${pair.otherLoadCores.toFixed(2)}`
  );
}

export async function measureDaemon(
  context,
  {
    sessions,
    repetitions,
    turnDeltas,
    subscribers,
    fanoutDeltas,
    fanoutTurns,
    pacedMs = 10,
    pacedTurns = 1,
    gate,
    log,
    repoRoot,
  },
) {
  const home = context.environment.HOME;
  const before = processesWithEnvironment('HOME', home).length;
  let leftoverProcesses = 0;
  const pairs = await runPairs({
    legs: ['inProcess', 'daemon'],
    repetitions,
    gate,
    label: 'daemon',
    log,
    describePair,
    run: async (leg) => {
      const result =
        leg === 'daemon'
          ? await daemonLeg(context, { sessions, turnDeltas, repoRoot })
          : await inProcessLeg(context, { sessions, turnDeltas });
      result.leftover = await killLeftoverProcesses(home);
      leftoverProcesses += result.leftover;
      return result;
    },
  });
  const fanout = await measureFanout(context, {
    sessions,
    subscribers,
    fanoutDeltas,
    fanoutTurns,
    pacedMs,
    pacedTurns,
    repoRoot,
    log,
  });
  const fanoutLeftover = await killLeftoverProcesses(home);
  leftoverProcesses += fanoutLeftover;
  return {
    sessions,
    repetitions,
    turnDeltas,
    pairs,
    fanout,
    liveWithHomeBefore: before,
    leftoverProcesses,
    fanoutLeftover,
    finalLiveWithHome: processesWithEnvironment('HOME', home).length,
  };
}
