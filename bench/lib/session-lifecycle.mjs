/**
 * Open session → first delta (cold, warm, warm pool) and close (idle, busy), raw loop against
 * Tether, each leg with a fresh session.
 */
import { performance } from 'node:perf_hooks';
import { runPairs } from './paired-runs.mjs';
import { isAlive } from './proc.mjs';
import { recordSignals, watchDeath } from './process-stop-timing.mjs';
import { RawClaude, isTextDelta } from './raw-session.mjs';
import { SHORT, SLOW } from './scripted-prompts.mjs';
import { EventWatch, startTether, tetherTurn } from './tether-harness.mjs';
import { waitForIdleSpare } from './warm-pool.mjs';

/**
 * Raw leg: spawn → first delta / result of a short turn (cold), a 2nd short turn (warm), then
 * idle close (EOF → exit) or busy close (a slow turn, after its first delta EOF + SIGTERM → exit).
 */
async function rawLifecycle(context, closeKind) {
  const start = performance.now();
  const raw = new RawClaude(context);
  const spawnedMs = performance.now() - start;
  try {
    const cold = await raw.turn(SHORT, { start });
    const warm = await raw.turn(SHORT);
    const leg = {
      coldFirstDeltaMs: cold.firstDeltaMs,
      coldTurnMs: cold.turnMs,
      warmFirstDeltaMs: warm.firstDeltaMs,
      warmTurnMs: warm.turnMs,
      closeKind,
      spawnReturnedMs: spawnedMs,
    };
    if (closeKind === 'busy') {
      const mark = raw.mark();
      raw.sendUser(SLOW);
      await raw.waitFor(isTextDelta, mark);
    }
    const t0 = performance.now();
    const death = watchDeath(raw.pid);
    raw.endInput();
    if (closeKind === 'busy') raw.kill('SIGTERM');
    const exit = await raw.exited;
    const closed = await raw.closed;
    leg.closeMs = exit.at - t0;
    leg.streamsClosedMs = closed.at - t0;
    leg.diedMs = death.diedMs(t0);
    leg.exit = exit.code ?? exit.signal;
    return leg;
  } finally {
    await raw.dispose();
  }
}

/**
 * Tether leg: openSession → first delta / run.completed of a short turn (cold; the spawn happens on
 * the first turn, or a spare is adopted with the warm pool), a 2nd short turn (warm), then
 * closeSession while idle, or during a slow turn after its first delta (busy) → resolved.
 */
async function tetherLifecycle(context, tether, closeKind, { withWarmTurn = true, signals } = {}) {
  const { runtime, emits } = tether;
  const start = performance.now();
  const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: context.workspace } });
  const openedAt = performance.now();
  const watch = new EventWatch(runtime, sessionId);
  try {
    const cold = await tetherTurn(runtime, watch, sessionId, SHORT, { start });
    // Where the cold path's time goes: openSession, then (provider side) the spawn and the first delta line.
    const emitted = (type) => (emits.find((emit) => emit.at >= start && emit.type === type)?.at ?? NaN) - start;
    const leg = {
      coldFirstDeltaMs: cold.firstDeltaMs,
      coldTurnMs: cold.turnMs,
      closeKind,
      openSessionMs: openedAt - start,
      spawnEmittedMs: emitted('session.process_started'),
      firstDeltaEmittedMs: emitted('run.message_delta'),
    };
    if (withWarmTurn) {
      const warm = await tetherTurn(runtime, watch, sessionId, SHORT);
      leg.warmFirstDeltaMs = warm.firstDeltaMs;
      leg.warmTurnMs = warm.turnMs;
      // The provider emitted run.completed (the result line, translated) → the subscriber got it.
      const emit = emits.findLast((entry) => entry.type === 'run.completed' && entry.at <= warm.endedAt);
      leg.warmCompletedLagMs = emit ? warm.endedAt - emit.at : NaN;
    }
    const pid = watch.latestPid();
    let mark = watch.mark();
    let runId;
    if (closeKind === 'busy') {
      ({ runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: SLOW }] }));
      await watch.waitFor((event) => event.type === 'run.message_delta' && event.runId === runId, mark);
      mark = watch.mark();
    }
    const t0 = performance.now();
    const death = pid === undefined ? null : watchDeath(pid);
    await runtime.closeSession({ sessionId });
    leg.closeMs = performance.now() - t0;
    leg.diedMs = death ? death.diedMs(t0) : NaN;
    if (closeKind === 'busy' && signals && pid !== undefined) leg.sigtermMs = signals.firstMs(pid, 'SIGTERM', t0);
    leg.processGoneAtResolve = pid === undefined ? null : !isAlive(pid);
    if (runId) {
      const completed = await watch.waitFor(
        (event) => event.type === 'run.completed' && event.runId === runId,
        mark,
        5_000,
      );
      leg.runCompletedMs = completed.at - t0;
      leg.runOutcome = `${completed.event.outcome}${completed.event.error ? ` (${completed.event.error.code})` : ''}`;
    }
    const stopped = await watch
      .waitFor((event) => event.type === 'session.process_stopped', mark, 5_000)
      .catch(() => null);
    leg.processStoppedEventMs = stopped ? stopped.at - t0 : NaN;
    leg.processStoppedReason = stopped?.event.reason ?? null;
    return leg;
  } finally {
    await watch.stop();
  }
}

export async function measureLifecycle(context, { repetitions, gate, log, warmPool }) {
  const tether = await startTether({ ...context, recordCommits: true });
  const pool = warmPool
    ? await startTether({ ...context, provider: { warmPool: { spares: 1 } }, recordCommits: true })
    : null;
  const spareWaits = [];
  const signals = recordSignals();
  try {
    if (pool) {
      // A session opened (and closed without a turn) makes the pool start its first spare.
      const { sessionId } = await pool.runtime.openSession({
        workspace: { kind: 'directory', path: context.workspace },
      });
      await pool.runtime.closeSession({ sessionId });
    }
    const legs = pool ? ['raw', 'tether', 'warmPool'] : ['raw', 'tether'];
    const pairs = await runPairs({
      legs,
      repetitions,
      gate: {
        ...gate,
        beforePair: async () => {
          // Outside the timings: the spare taken by the previous leg has been replaced and is idle.
          if (pool) spareWaits.push(await waitForIdleSpare({ apiPid: context.apiPid }));
          await gate.beforePair();
        },
      },
      label: 'lifecycle',
      log,
      run: async (leg, index) => {
        // Alternate pairs close idle and busy; each leg starts with a fresh session.
        const closeKind = index % 2 === 0 ? 'idle' : 'busy';
        if (leg === 'raw') return rawLifecycle(context, closeKind);
        if (leg === 'tether') return tetherLifecycle(context, tether, closeKind, { signals });
        const result = await tetherLifecycle(context, pool, 'idle', { withWarmTurn: false });
        return result;
      },
    });
    return { pairs, warmPool: Boolean(pool), spareWaitMs: spareWaits };
  } finally {
    signals.restore();
    await tether.dispose();
    await pool?.dispose();
  }
}
