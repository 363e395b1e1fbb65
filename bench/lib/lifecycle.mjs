/**
 * Lifecycle scenarios: interrupt latency, close latency (idle and busy), open session → first
 * delta (cold, warm, warm pool), crash detection, memory per idle open session, and a soak of
 * open/turn/close cycles. Each Tether figure is measured beside a raw-loop baseline in the same
 * run where one exists (the raw side: claude spawned with Tether's argv and environment, driven
 * over stdin/stdout directly). Sequential throughout: the CLI alone uses ~1.4 of 2 cores.
 */
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import v8 from 'node:v8';
import vm from 'node:vm';
import { childrenOf, descendantsOf, isAlive, machineBusyMs, openFdCount, processCpuMs, processesWithEnvironment, processFinished, rssKb, treeCpuMs } from './proc.mjs';
import { RawClaude, isResult, isTextDelta } from './raw-session.mjs';
import { EventWatch, startTether, tetherTurn } from './tether-harness.mjs';

export const SHORT = 'Reply briefly. [bench:short]';
export const SLOW = 'Reply at length. [bench:slow]';

v8.setFlagsFromString('--expose-gc');
const collectGarbage = vm.runInNewContext('gc');

/** A full collection, then the heap in use (bytes). */
function heapAfterGc() {
  collectGarbage();
  collectGarbage();
  return process.memoryUsage().heapUsed;
}

/** Cores used by everything outside this process tree (the bench, its fake API, its claude children) from now to end(). */
function startMeter() {
  const busy = machineBusyMs();
  const own = treeCpuMs();
  const started = performance.now();
  return { end: () => (machineBusyMs() - busy - (treeCpuMs() - own)) / (performance.now() - started) };
}

/** The order of the legs in pair (or triple) number `index`: rotating, to cancel drift. */
function legOrder(legs, index) {
  const shift = index % legs.length;
  return [...legs.slice(shift), ...legs.slice(0, shift)];
}

async function runPairs({ legs, repetitions, gate, label, run, log }) {
  const pairs = [];
  for (let index = 0; index < repetitions; index += 1) {
    await gate.beforePair();
    const meter = startMeter();
    const order = legOrder(legs, index);
    const pair = { repetition: index + 1, order: order.join(',') };
    for (const leg of order) pair[leg] = await run(leg, index);
    pair.otherLoadCores = meter.end();
    pair.quiet = pair.otherLoadCores < gate.quietCores;
    pairs.push(pair);
    log?.(`bench: ${label} #${pair.repetition} ${pair.order.padEnd(18)} ${legs.map((leg) => `${leg} ${describe(pair[leg])}`).join('  ')}  other load ${pair.otherLoadCores.toFixed(2)}`);
  }
  return pairs;
}

function describe(leg) {
  return Object.entries(leg)
    .filter(([key, value]) => key.endsWith('Ms') && Number.isFinite(value))
    .map(([key, value]) => `${key.replace(/Ms$/, '')}=${value.toFixed(1)}`)
    .join(' ');
}

/**
 * When a process has finished (a zombie with no thread left, or gone), polled every ~1 ms from now
 * on: the kernel-side moment, to split a close into "the CLI takes this long to exit" and "the
 * host notices and finishes this much later". Used the same way on both legs. It misses the
 * moment (NaN) when the host handles the exit before the event loop reaches a timer again.
 */
function watchDeath(pid) {
  const started = performance.now();
  let diedAt = NaN;
  let timer;
  const check = () => {
    if (processFinished(pid)) {
      diedAt = performance.now();
      return;
    }
    if (performance.now() - started < 30_000) timer = setTimeout(check, 1);
  };
  check();
  return {
    /** ms from `from` to the death; NaN if not seen. */
    diedMs(from) {
      clearTimeout(timer);
      return diedAt - from;
    },
  };
}

/**
 * Signals this process sends (process.kill wrapped for the duration of a scenario): when Tether's
 * stop path actually signals the CLI, relative to the close request. Bench-side only.
 */
function recordSignals() {
  const sent = [];
  const original = process.kill;
  process.kill = function kill(pid, signal) {
    sent.push({ at: performance.now(), pid, signal: signal ?? 'SIGTERM' });
    return original.call(process, pid, signal);
  };
  return {
    sent,
    /** ms from `from` to the first `signal` sent to `pid` or its group; NaN if none. */
    firstMs(pid, signal, from) {
      const found = sent.find((entry) => entry.at >= from && Math.abs(entry.pid) === pid && entry.signal === signal);
      return found ? found.at - from : NaN;
    },
    restore() {
      process.kill = original;
    },
  };
}

// ---- 1. interrupt latency ---------------------------------------------------------------------

/** Raw: interrupt control request written right after the first delta → its control_response, → the result line. */
async function rawInterrupt(raw) {
  const mark = raw.mark();
  const start = performance.now();
  raw.sendUser(SLOW);
  const first = await raw.waitFor(isTextDelta, mark);
  const t0 = performance.now();
  const requestId = raw.interrupt();
  const ack = raw.waitFor((frame) => frame.type === 'control_response' && frame.response?.request_id === requestId, mark);
  ack.catch(() => {});
  const result = await raw.waitFor(isResult, mark);
  const acknowledged = await ack;
  const timeline = raw.frames
    .slice(mark)
    .filter((entry) => entry.at >= t0 && entry.at <= result.at)
    .map((entry) => `${entry.frame.type}${entry.frame.event?.type ? `/${entry.frame.event.type}` : ''}@${(entry.at - t0).toFixed(1)}`)
    .join(' ');
  return { firstDeltaMs: first.at - start, ackMs: acknowledged.at - t0, completedMs: result.at - t0, resultSubtype: result.frame.subtype, timeline };
}

/** Tether: interruptRun issued when the first run.message_delta is delivered → receipt, → run.completed delivered. */
async function tetherInterrupt(runtime, watch, sessionId, { commits, emits }) {
  const mark = watch.mark();
  const start = performance.now();
  const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: SLOW }] });
  const first = await watch.waitFor((event) => event.type === 'run.message_delta' && event.runId === runId, mark);
  const t0 = performance.now();
  const receipt = runtime.interruptRun({ sessionId, runId }).then((value) => ({ value, at: performance.now() }));
  receipt.catch(() => {});
  const completed = await watch.waitFor((event) => event.type === 'run.completed' && event.runId === runId, mark);
  const acknowledged = await receipt;
  if (completed.event.outcome !== 'interrupted') throw new Error(`tether: the interrupted run ended ${completed.event.outcome}`);
  const after = watch.events.slice(mark).filter((entry) => entry.at >= t0);
  const requested = after.find((entry) => entry.event.type === 'run.interrupt_requested');
  return {
    // What was delivered between the request and run.completed, and when (ms after the request).
    timeline: after.map((entry) => `${entry.event.type}@${(entry.at - t0).toFixed(1)}`).join(' '),
    // Store commits from the request to run.completed: when each started and what it held.
    commits: commits
      .filter((commit) => commit.at >= t0 && commit.at <= completed.at)
      .map((commit) => `[${commit.types.join(',') || `${commit.sessions}s/${commit.runs}r/${commit.receipts}rc`}]@${(commit.at - t0).toFixed(1)}-${((commit.settledAt ?? NaN) - t0).toFixed(1)}`)
      .join(' '),
    // Parts the provider emitted from the request to run.completed (the CLI's lines, translated).
    emitted: emits
      .filter((emit) => emit.at >= t0 && emit.at <= completed.at)
      .map((emit) => `${emit.type}@${(emit.at - t0).toFixed(1)}`)
      .join(' '),
    providerCompletedMs: (emits.findLast((emit) => emit.type === 'run.completed' && emit.at >= t0 && emit.at <= completed.at)?.at ?? NaN) - t0,
    firstDeltaMs: first.at - start,
    ackMs: acknowledged.at - t0,
    completedMs: completed.at - t0,
    requestedEventMs: requested ? requested.at - t0 : NaN,
    receiptRunId: acknowledged.value.runId === runId,
  };
}

export async function measureInterrupts(context, { repetitions, gate, log }) {
  const raw = new RawClaude(context);
  const tether = await startTether({ ...context, recordCommits: true });
  let watch;
  try {
    const { sessionId } = await tether.runtime.openSession({ workspace: { kind: 'directory', path: context.workspace } });
    watch = new EventWatch(tether.runtime, sessionId);
    // One ordinary turn each first: both processes are up and warm before the first stop.
    await raw.turn(SHORT);
    await tetherTurn(tether.runtime, watch, sessionId, SHORT);
    const pairs = await runPairs({
      legs: ['raw', 'tether'],
      repetitions,
      gate,
      label: 'interrupt',
      log,
      run: (leg) => (leg === 'raw' ? rawInterrupt(raw) : tetherInterrupt(tether.runtime, watch, sessionId, tether)),
    });
    return { pairs };
  } finally {
    await watch?.stop();
    await raw.dispose();
    await tether.dispose();
  }
}

// ---- 2 + 5. open → first delta (cold, warm, warm pool) and close (idle, busy) ------------------

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
    const leg = { coldFirstDeltaMs: cold.firstDeltaMs, coldTurnMs: cold.turnMs, warmFirstDeltaMs: warm.firstDeltaMs, warmTurnMs: warm.turnMs, closeKind, spawnReturnedMs: spawnedMs };
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
      const emit = emits.findLast((entry) => entry.type === 'run.completed' && entry.at <= warm.completedAt);
      leg.warmCompletedLagMs = emit ? warm.completedAt - emit.at : NaN;
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
      const completed = await watch.waitFor((event) => event.type === 'run.completed' && event.runId === runId, mark, 5_000);
      leg.runCompletedMs = completed.at - t0;
      leg.runOutcome = `${completed.event.outcome}${completed.event.error ? ` (${completed.event.error.code})` : ''}`;
    }
    const stopped = await watch.waitFor((event) => event.type === 'session.process_stopped', mark, 5_000).catch(() => null);
    leg.processStoppedEventMs = stopped ? stopped.at - t0 : NaN;
    leg.processStoppedReason = stopped?.event.reason ?? null;
    return leg;
  } finally {
    await watch.stop();
  }
}

/**
 * The warm pool's spare is ready when a claude child that belongs to no session exists and has
 * gone idle (initialize answered): its CPU time stops growing. Bounded; resolves with the ms waited.
 */
async function waitForIdleSpare({ apiPid, timeoutMs = 15_000 }) {
  const started = performance.now();
  let previous = new Map();
  let stableRounds = 0;
  while (performance.now() - started < timeoutMs) {
    const spares = childrenOf(process.pid).filter((child) => child.pid !== apiPid);
    const cpu = new Map(spares.map((child) => [child.pid, processCpuMs(child.pid)]));
    const idle = spares.length > 0 && spares.every((child) => previous.has(child.pid) && cpu.get(child.pid) - previous.get(child.pid) <= 10);
    stableRounds = idle ? stableRounds + 1 : 0;
    if (stableRounds >= 3) break;
    previous = cpu;
    await sleep(100);
  }
  return performance.now() - started;
}

/** Whether the built provider accepts `warmPool` (being added to the product; used only if present). */
export function warmPoolAvailable(repoRoot) {
  try {
    return /\bwarmPool\??:/.test(readFileSync(`${repoRoot}/packages/provider-claude/dist/claude-provider.d.ts`, 'utf8'));
  } catch {
    return false;
  }
}

export async function measureLifecycle(context, { repetitions, gate, log, warmPool }) {
  const tether = await startTether({ ...context, recordCommits: true });
  const pool = warmPool ? await startTether({ ...context, provider: { warmPool: { spares: 1 } }, recordCommits: true }) : null;
  const spareWaits = [];
  const signals = recordSignals();
  try {
    if (pool) {
      // A session opened (and closed without a turn) makes the pool start its first spare.
      const { sessionId } = await pool.runtime.openSession({ workspace: { kind: 'directory', path: context.workspace } });
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

// ---- 3. crash detection ------------------------------------------------------------------------

/** Raw reference: SIGKILL mid-turn → the 'exit' event, → 'close' (stdio ended): the floor for any host. */
async function rawCrash(context) {
  const raw = new RawClaude(context);
  try {
    const mark = raw.mark();
    raw.sendUser(SLOW);
    await raw.waitFor(isTextDelta, mark);
    const t0 = performance.now();
    raw.kill('SIGKILL');
    const death = watchDeath(raw.pid);
    const exit = await raw.exited;
    const closed = await raw.closed;
    return { exitMs: exit.at - t0, closedMs: closed.at - t0, diedMs: death.diedMs(t0) };
  } finally {
    await raw.dispose();
  }
}

/** Tether: SIGKILL the session's claude (pid from session.process_started) after the first delta → run.completed delivered. */
async function tetherCrash(runtime, watch, sessionId) {
  const mark = watch.mark();
  const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: SLOW }] });
  await watch.waitFor((event) => event.type === 'run.message_delta' && event.runId === runId, mark);
  // session.process_started is emitted at spawn, so it was delivered before the first delta.
  const pid = watch.latestPid();
  if (!pid || !isAlive(pid)) throw new Error(`tether: no live claude process to kill (pid ${pid})`);
  const t0 = performance.now();
  process.kill(pid, 'SIGKILL');
  const death = watchDeath(pid);
  const completed = await watch.waitFor((event) => event.type === 'run.completed' && event.runId === runId, mark, 30_000);
  const stopped = await watch.waitFor((event) => event.type === 'session.process_stopped', mark, 5_000).catch(() => null);
  return {
    completedMs: completed.at - t0,
    diedMs: death.diedMs(t0),
    processStoppedEventMs: stopped ? stopped.at - t0 : NaN,
    outcome: `${completed.event.outcome}${completed.event.error ? ` (${completed.event.error.code})` : ''}`,
    stoppedReason: stopped?.event.reason ?? null,
  };
}

export async function measureCrashes(context, { repetitions, gate, log }) {
  const tether = await startTether(context);
  let watch;
  try {
    const { sessionId } = await tether.runtime.openSession({ workspace: { kind: 'directory', path: context.workspace } });
    watch = new EventWatch(tether.runtime, sessionId);
    // The conversation exists before the first kill, so every crashed turn is followed by a resume.
    await tetherTurn(tether.runtime, watch, sessionId, SHORT);
    const pairs = await runPairs({
      legs: ['raw', 'tether'],
      repetitions,
      gate,
      label: 'crash',
      log,
      run: (leg) => (leg === 'raw' ? rawCrash(context) : tetherCrash(tether.runtime, watch, sessionId)),
    });
    return { pairs };
  } finally {
    await watch?.stop();
    await tether.dispose();
  }
}

// ---- 4. memory per idle open session -----------------------------------------------------------

/** RSS (KiB) of every live claude process under this one (the fake API and its threads excluded). */
function claudeTreeRss(apiPid) {
  const api = new Set([apiPid, ...descendantsOf(apiPid).map((child) => child.pid)]);
  const processes = descendantsOf(process.pid).filter((child) => !api.has(child.pid));
  return { count: processes.length, kb: processes.reduce((sum, child) => sum + (rssKb(child.pid) || 0), 0) };
}

async function memoryVariant(context, { sessions, variant, log }) {
  const released = variant === 'released';
  const tether = await startTether({
    ...context,
    provider: { maxProcesses: sessions + 2, idleReleaseMs: released ? 250 : 0 },
  });
  const watches = [];
  try {
    // The baseline: the runtime is up, no session yet.
    await sleep(200);
    const heapBefore = heapAfterGc();
    const rssBefore = rssKb();
    const started = performance.now();
    for (let index = 0; index < sessions; index += 1) {
      const { sessionId } = await tether.runtime.openSession({ workspace: { kind: 'directory', path: context.workspace } });
      const watch = new EventWatch(tether.runtime, sessionId);
      watches.push({ sessionId, watch });
      await tetherTurn(tether.runtime, watch, sessionId, SHORT);
    }
    const openMs = performance.now() - started;
    if (released) {
      await Promise.all(watches.map(({ watch }) => watch.waitFor((event) => event.type === 'session.process_stopped', 0, 30_000)));
    }
    await sleep(500);
    const heapAfter = heapAfterGc();
    const rssAfter = rssKb();
    const children = claudeTreeRss(context.apiPid);
    const benchKb = rssAfter - rssBefore;
    const result = {
      variant,
      sessions,
      openMs,
      claudeProcesses: children.count,
      claudeRssKb: children.kb,
      benchRssDeltaKb: benchKb,
      benchHeapDeltaBytes: heapAfter - heapBefore,
      perSessionKb: (benchKb + children.kb) / sessions,
      perSessionBenchKb: benchKb / sessions,
      perSessionClaudeKb: children.kb / sessions,
      perSessionHeapBytes: (heapAfter - heapBefore) / sessions,
    };
    log?.(
      `bench: memory ${variant}: ${sessions} sessions in ${(openMs / 1000).toFixed(1)} s; ${children.count} claude processes, ${(children.kb / 1024).toFixed(0)} MiB; ` +
        `bench RSS +${(benchKb / 1024).toFixed(1)} MiB, heap +${((heapAfter - heapBefore) / 2 ** 20).toFixed(2)} MiB; per session ${(result.perSessionKb / 1024).toFixed(2)} MiB`,
    );
    return result;
  } finally {
    for (const { watch } of watches) await watch.stop();
    await tether.dispose();
  }
}

export async function measureMemory(context, { sessions, log }) {
  const alive = await memoryVariant(context, { sessions, variant: 'alive', log });
  const released = await memoryVariant(context, { sessions, variant: 'released', log });
  return { alive, released, ratio: alive.perSessionKb / released.perSessionKb };
}

// ---- 6. soak -----------------------------------------------------------------------------------

export async function measureSoak(context, { cycles, log }) {
  const home = context.environment.HOME;
  const tether = await startTether(context);
  const cycleMs = [];
  const stoppedReasons = {};
  let notGoneAtResolve = 0;
  try {
    await sleep(200);
    const before = { fds: openFdCount(), rssKb: rssKb(), heapBytes: heapAfterGc(), claude: processesWithEnvironment('HOME', home).length };
    const started = performance.now();
    for (let index = 0; index < cycles; index += 1) {
      const cycleStart = performance.now();
      const { sessionId } = await tether.runtime.openSession({ workspace: { kind: 'directory', path: context.workspace } });
      const watch = new EventWatch(tether.runtime, sessionId);
      await tetherTurn(tether.runtime, watch, sessionId, SHORT);
      const pid = watch.latestPid();
      const mark = watch.mark();
      await tether.runtime.closeSession({ sessionId });
      cycleMs.push(performance.now() - cycleStart);
      if (pid !== undefined && isAlive(pid)) notGoneAtResolve += 1;
      const stopped = await watch.waitFor((event) => event.type === 'session.process_stopped', mark, 5_000).catch(() => null);
      stoppedReasons[stopped?.event.reason ?? 'none'] = (stoppedReasons[stopped?.event.reason ?? 'none'] ?? 0) + 1;
      await watch.stop();
      if ((index + 1) % 50 === 0) log?.(`bench: soak ${index + 1}/${cycles} cycles, ${((performance.now() - started) / 1000).toFixed(1)} s, ${openFdCount()} fds`);
    }
    const totalMs = performance.now() - started;
    await sleep(200);
    const after = { fds: openFdCount(), rssKb: rssKb(), heapBytes: heapAfterGc(), claude: processesWithEnvironment('HOME', home).length };
    const sessionsListed = (await tether.runtime.listSessions()).length;
    await tether.dispose();
    const afterShutdown = { fds: openFdCount(), claude: processesWithEnvironment('HOME', home).length };
    return { cycles, totalMs, cycleMs, before, after, afterShutdown, notGoneAtResolve, stoppedReasons, sessionsListed };
  } finally {
    await tether.dispose();
  }
}
