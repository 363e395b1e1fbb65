/**
 * The peers scenario's Tether leg, run in its own host process: the main scenario's Tether (an
 * in-process runtime over SQLite, the Claude provider), through the lifecycle harness; the new
 * session prewarmed claims the provider's warm-pool spare for a folder never seen before.
 */
import { randomUUID } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { cpuMs, measureInterrupts, measureShortTurns, measureSteadyTurns } from './peer-turn-timer.mjs';
import { processEnded } from './process-stop-timing.mjs';
import { OwnParts } from './stdio-timestamps.mjs';
import { EventWatch, startTether, tetherTurn } from './tether-harness.mjs';
import { spareSettledMs, waitForIdleSpare } from './warm-pool.mjs';

const isDelta = (runId) => (event) => event.type === 'run.message_delta' && event.runId === runId;

export async function runTetherPeerLeg(context) {
  const { workspace, prompt, short, slow, warmPool } = context;
  const directory = { kind: 'directory', path: workspace };
  const result = {};
  const tether = await startTether(context);
  let watch;
  try {
    // (a) cold: openSession + the prompt → first delta, → run.completed; (d) RSS after it; (b, c) a warm turn.
    const start = performance.now();
    const { sessionId } = await tether.runtime.openSession({ workspace: directory });
    watch = new EventWatch(tether.runtime, sessionId);
    const cold = await tetherTurn(tether.runtime, watch, sessionId, prompt, { start });
    result.cold = { firstDeltaMs: cold.firstDeltaMs, turnMs: cold.turnMs };
    result.rssAfterOneTurnKb = process.memoryUsage().rss / 1024;
    const cpu = process.cpuUsage();
    const mark = watch.mark();
    const warm = await tetherTurn(tether.runtime, watch, sessionId, prompt);
    const usage = process.cpuUsage(cpu);
    const deltas = watch.events.slice(mark).filter((entry) => isDelta(warm.runId)(entry.event)).length;
    result.warm = { firstDeltaMs: warm.firstDeltaMs, turnMs: warm.turnMs, deltas, cpuMs: cpuMs(usage) };
    result.steady = await measureSteadyTurns(async () => {
      const steadyMark = watch.mark();
      const turn = await tetherTurn(tether.runtime, watch, sessionId, prompt);
      const steadyDeltas = watch.events.slice(steadyMark).filter((entry) => isDelta(turn.runId)(entry.event)).length;
      return { turnMs: turn.turnMs, deltas: steadyDeltas };
    });
    Object.assign(result, await measureTetherShortTurnsAndStops(tether.runtime, watch, sessionId, { short, slow }));
    // (g) the host's second session: the first closed (its process ended), a new one opened in the same
    // folder, its CLI cold; the runtime's own code has run once already.
    const firstPid = watch.latestPid();
    await tether.runtime.closeSession({ sessionId });
    await processEnded(firstPid);
    result.secondCold = await measureTetherSecondSession(tether, directory, prompt);
  } finally {
    await watch?.stop();
    await tether.dispose();
  }
  if (warmPool) result.prewarmed = await measureTetherPrewarmed(context);
  return result;
}

/**
 * (h) the warm short turns, then (f) interruptRun when the first delta of a slow turn is delivered →
 * run.completed delivered: the first stop, then the next ones, each after a short turn.
 */
export async function measureTetherShortTurnsAndStops(runtime, watch, sessionId, { short, slow }) {
  const shortTurn = () => tetherTurn(runtime, watch, sessionId, short);
  const ownParts = new OwnParts();
  const warmShort = await measureShortTurns(shortTurn, ownParts);
  const stops = await measureInterrupts(
    (beforeStop) => tetherStop(runtime, watch, sessionId, slow, beforeStop),
    shortTurn,
    ownParts,
  );
  return { warmShort, ...stops, ownParts: ownParts.medians() };
}

/**
 * A slow turn stopped by interruptRun once its first delta is delivered: when the stop was asked
 * (`beforeStop` runs right before) and when its run.completed (interrupted) was delivered.
 */
async function tetherStop(runtime, watch, sessionId, slow, beforeStop = () => {}) {
  const slowMark = watch.mark();
  const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: slow }] });
  await watch.waitFor(isDelta(runId), slowMark);
  beforeStop();
  const startedAt = performance.now();
  await runtime.interruptRun({ sessionId, runId });
  const completed = await watch.waitFor((event) => event.type === 'run.completed' && event.runId === runId, slowMark);
  if (completed.event.outcome !== 'interrupted')
    throw new Error(`tether: the interrupted run ended ${completed.event.outcome}`);
  return { startedAt, endedAt: completed.at };
}

async function measureTetherSecondSession(tether, directory, prompt) {
  const start = performance.now();
  const { sessionId } = await tether.runtime.openSession({ workspace: directory });
  const watch = new EventWatch(tether.runtime, sessionId);
  try {
    const turn = await tetherTurn(tether.runtime, watch, sessionId, prompt, { start });
    return { firstDeltaMs: turn.firstDeltaMs, turnMs: turn.turnMs };
  } finally {
    await watch.stop();
  }
}

export async function measureTetherPrewarmed(context) {
  const { workspace, short } = context;
  const directory = { kind: 'directory', path: workspace };
  // (e) the warm pool's spare, parked (--await-claim) and idle, claimed by a new session in a folder
  // never seen before (the session that started the pool opened in the main workspace).
  const pool = await startTether({ ...context, provider: { warmPool: { spares: 1 } } });
  let poolWatch;
  try {
    // The pool's first session takes the spare its open started (a session takes its spare at the
    // open): its turn runs there, and the spare that replaces it, once that turn ended, is the one
    // measured. Closed only once that spare is up and idle: a session closed before then would leave
    // the pool without a spare, and the measured session would wait for one to start.
    const first = await pool.runtime.openSession({ workspace: directory });
    const firstWatch = new EventWatch(pool.runtime, first.sessionId);
    await tetherTurn(pool.runtime, firstWatch, first.sessionId, short);
    await firstWatch.stop();
    const fresh = `${context.root}/fresh-tether-${randomUUID()}`;
    await mkdir(fresh, { recursive: true });
    await waitForIdleSpare({ apiPid: context.apiPid, minimumSpares: 2 });
    await pool.runtime.closeSession({ sessionId: first.sessionId });
    // The closed session's claude ends, and the machine is quiet again, before the clock starts, as
    // the raw and SDK legs' earlier processes have ended before theirs: timed at once, the claim
    // shared the 2 cores with that process's teardown. Settled as every leg's spare is (spareSettledMs).
    await waitForIdleSpare({ apiPid: context.apiPid, idleMs: spareSettledMs });
    const start = performance.now();
    const { sessionId } = await pool.runtime.openSession({ workspace: { kind: 'directory', path: fresh } });
    poolWatch = new EventWatch(pool.runtime, sessionId);
    const turn = await tetherTurn(pool.runtime, poolWatch, sessionId, short, { start });
    return { firstDeltaMs: turn.firstDeltaMs, turnMs: turn.turnMs };
  } finally {
    await poolWatch?.stop();
    await pool.dispose();
  }
}
