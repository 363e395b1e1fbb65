/**
 * The store scenario (issue 16): SQLite and PostgreSQL side by side, each "daemon" a separate Node
 * process with its own store (bench/store-scale-out-worker.mjs), writing only its own sessions.
 * (1) Durable appends per second, committed as the runtime's EventWriter commits them: one unit in
 *     flight per process, each unit several sessions' events plus their session rows; 1, 2 and 3
 *     processes on PostgreSQL (SQLite's data directory takes one process: its lock refuses a second).
 * (2) Replay of a 100k-event session in pages of 500, each page read after the last (followSession),
 *     by 1, 2 and 3 processes at once.
 * (3) Cross-daemon fan-out: process A commits paced units; 1, 2 or 3 other processes learn of them
 *     through store.coordination.onAppended and read the rows; latency from A's commit resolving to
 *     the follower having the unit's last event.
 * Every moment is CLOCK_MONOTONIC (process.hrtime), one clock for every process of the host.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startTestPostgres } from '@tether/testkit';
import { clockOffset, monotonicMs } from './monotonic-clock.mjs';
import { descendantsOf, machineBusyMs, processCpuMs, selfCpuMs } from './proc.mjs';
import { measureHubLatency } from './store-scale-out-hub.mjs';
import { startStoreWorker } from './store-scale-out-process.mjs';
import { median, quantile, round } from './stats.mjs';

/**
 * Unit shapes, from packages/runtime/src/log/event-writer.ts: a daemon has one EventWriter, which
 * commits everything staged (all sessions' output) at most every 5 ms, one commit at a time.
 * "streaming": 8 sessions streaming at once, a few stdout lines each per window (4 events per
 * session); "burst": one session's burst (the main scenario's 2,000-delta turn commits a median 54).
 */
const shapes = [
  { name: 'streaming', sessionsPerUnit: 8, eventsPerSession: 4 },
  { name: 'burst', sessionsPerUnit: 1, eventsPerSession: 50 },
];
const sessionsPerProcess = 16;
const replayPageSize = 500;

const summary = (values) => ({
  n: values.length,
  p50: round(quantile(values, 0.5), 2),
  p99: round(quantile(values, 0.99), 2),
  max: round(Math.max(...values), 2),
});

/**
 * Runs `work` and gives the cores the rest of the machine used meanwhile: all but this process and
 * its descendants (the workers, the PostgreSQL server). Other helpers share this machine.
 */
async function withOtherLoad(work) {
  const pids = descendantsOf(process.pid).map(({ pid }) => pid);
  const before = new Map(pids.map((pid) => [pid, processCpuMs(pid) || 0]));
  const busy = machineBusyMs();
  const self = selfCpuMs();
  const started = monotonicMs();
  const result = await work();
  const elapsed = monotonicMs() - started;
  // A process gone meanwhile has its CPU counted as the rest of the machine's: an upper bound.
  const ownMs = pids.reduce((sum, pid) => sum + ((processCpuMs(pid) || before.get(pid)) - before.get(pid)), 0);
  return { result, otherCores: round((machineBusyMs() - busy - (selfCpuMs() - self) - ownMs) / elapsed, 2) };
}

/** Starts `count` workers on one store, each with its own sessions. */
async function startWorkers({ repoRoot, count, storeFor, label }) {
  const workers = [];
  try {
    for (let index = 0; index < count; index += 1) {
      const worker = await startStoreWorker({ repoRoot, name: `${label}-${index + 1}` });
      workers.push(worker);
      worker.coordination = (await worker.request({ type: 'open', ...storeFor(index) })).coordination;
    }
  } catch (error) {
    await Promise.all(workers.map((worker) => worker.stop()));
    throw error;
  }
  return workers;
}

/** The first `processes` workers append at once for `durationMs`: events, units and commit times. */
async function appendRound(workers, processes, shape, durationMs) {
  const startAt = monotonicMs() + 150;
  const { result: results, otherCores } = await withOtherLoad(() =>
    Promise.all(
      workers.slice(0, processes).map((worker) => worker.request({ type: 'append', ...shape, startAt, durationMs })),
    ),
  );
  const seconds = (Math.max(...results.map((result) => result.endedAt)) - startAt) / 1000;
  return {
    eventsPerSecond: results.reduce((sum, result) => sum + result.events, 0) / seconds,
    unitsPerSecond: results.reduce((sum, result) => sum + result.units, 0) / seconds,
    commitMs: results.flatMap((result) => result.commitMs),
    otherCores,
  };
}

/**
 * Every (processes, shape) configuration `rounds` times, interleaved (1, 2, 3 processes, then again),
 * so the rest of the machine's load, which changes from second to second here, falls on all alike;
 * each row gives the median round.
 */
async function measureAppends(workers, processCounts, { durationMs, rounds, gate, log, label }) {
  for (const worker of workers) await worker.request({ type: 'create', count: sessionsPerProcess });
  // Warm-up (not counted): statements prepared, pages and connections in use.
  await appendRound(workers, workers.length, shapes[0], 300);
  const configurations = processCounts.flatMap((processes) =>
    shapes.map((shape) => ({ processes, shape, rounds: [] })),
  );
  for (let round = 0; round < rounds; round += 1) {
    for (const configuration of configurations) {
      await gate?.beforePair();
      configuration.rounds.push(await appendRound(workers, configuration.processes, configuration.shape, durationMs));
    }
  }
  return configurations.map(({ processes, shape, rounds: measured }) => {
    const row = {
      shape: shape.name,
      eventsPerUnit: shape.sessionsPerUnit * shape.eventsPerSession,
      processes,
      eventsPerSecond: Math.round(median(measured.map((entry) => entry.eventsPerSecond))),
      unitsPerSecond: Math.round(median(measured.map((entry) => entry.unitsPerSecond))),
      roundsEventsPerSecond: measured.map((entry) => Math.round(entry.eventsPerSecond)),
      commitMs: summary(measured.flatMap((entry) => entry.commitMs)),
      otherCores: median(measured.map((entry) => entry.otherCores)),
    };
    log(
      `bench: store ${label} appends, ${processes} process(es), ${shape.name} (${row.eventsPerUnit}/unit): ${row.eventsPerSecond.toLocaleString('en')} events/s (rounds ${row.roundsEventsPerSecond.join(', ')}), commit p50 ${row.commitMs.p50} ms p99 ${row.commitMs.p99} ms; rest of the machine ${row.otherCores} cores`,
    );
    return row;
  });
}

/** One process fills a 100k-event session; then 1, 2, 3 processes replay it at once (2 rounds each). */
async function measureReplay(workers, processCounts, { events, gate, log, label }) {
  const { sessionId } = await workers[0].request({ type: 'fill', events, unitSize: 1000 }, 180_000);
  const rows = [];
  for (const processes of processCounts) {
    const rounds = [];
    await gate?.beforePair();
    const { otherCores } = await withOtherLoad(async () => {
      for (let round = 0; round < 2; round += 1) {
        const startAt = monotonicMs() + 150;
        rounds.push(
          await Promise.all(
            workers
              .slice(0, processes)
              .map((worker) =>
                worker.request({ type: 'replay', sessionId, pageSize: replayPageSize, startAt }, 120_000),
              ),
          ),
        );
      }
    });
    const best = rounds.reduce((left, right) =>
      Math.max(...left.map((result) => result.ms)) <= Math.max(...right.map((result) => result.ms)) ? left : right,
    );
    const slowestMs = Math.max(...best.map((result) => result.ms));
    const row = {
      processes,
      events: best[0].events,
      pages: best[0].pages,
      msPerProcess: best.map((result) => round(result.ms, 0)),
      eventsPerSecondPerProcess: Math.round(best[0].events / (slowestMs / 1000)),
      aggregateEventsPerSecond: Math.round((processes * best[0].events) / (slowestMs / 1000)),
      roundsMs: rounds.map((result) => result.map((entry) => round(entry.ms, 0))),
      otherCores,
    };
    log(
      `bench: store ${label} replay of ${row.events.toLocaleString('en')} events, ${processes} process(es) at once: ${row.msPerProcess.join(' / ')} ms, ${row.eventsPerSecondPerProcess.toLocaleString('en')} events/s each`,
    );
    rows.push(row);
  }
  return rows;
}

/** Polls the followers until each has read `lastSeqs` (session → seq); false after `timeoutMs`. */
async function followersHave(followers, lastSeqs, timeoutMs) {
  const deadline = monotonicMs() + timeoutMs;
  while (monotonicMs() < deadline) {
    const seen = await Promise.all(followers.map((follower) => follower.request({ type: 'seen' })));
    if (seen.every((answer) => Object.entries(lastSeqs).every(([id, seq]) => (answer.lastSeqs[id] ?? 0) >= seq)))
      return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return false;
}

/** Worker 0 writes paced units over 4 sessions; workers 1..n follow them through onAppended. */
async function measureFanOut(workers, followerCounts, { units, intervalMs, gate, log }) {
  const writer = workers[0];
  const { sessionIds } = await writer.request({ type: 'create', count: 4 });
  const unit = { sessionIds, eventsPerSession: 4, intervalMs };
  const rows = [];
  for (const count of followerCounts) {
    const followers = workers.slice(1, 1 + count);
    await Promise.all(followers.map((follower) => follower.request({ type: 'follow', sessionIds })));
    // The listeners connect lazily: commit single units until every follower has read one (not counted).
    let ready = false;
    for (let attempt = 0; attempt < 10 && !ready; attempt += 1) {
      const { committed } = await writer.request({ type: 'appendPaced', ...unit, units: 1 });
      ready = await followersHave(followers, committed[0].lastSeqs, 1_000);
    }
    if (!ready) {
      await Promise.all(followers.map((follower) => follower.request({ type: 'stopFollowing' })));
      return { skipped: `no append notice reached ${count} follower(s) within 10 s (does this store send them yet?)` };
    }
    await gate?.beforePair();
    const { result: paced, otherCores } = await withOtherLoad(() =>
      writer.request({ type: 'appendPaced', ...unit, units }, 120_000),
    );
    const { committed } = paced;
    const complete = await followersHave(followers, committed.at(-1).lastSeqs, 10_000);
    const arrivals = await Promise.all(followers.map((follower) => follower.request({ type: 'stopFollowing' })));
    const fromResolved = [];
    const fromSent = [];
    let missing = 0;
    for (const arrival of arrivals) {
      for (const entry of committed) {
        for (const [id, seq] of Object.entries(entry.lastSeqs)) {
          const at = arrival.arrivedAt[id]?.[seq];
          if (at === undefined) {
            missing += 1;
            continue;
          }
          fromResolved.push(at - entry.resolvedAt);
          fromSent.push(at - entry.sentAt);
        }
      }
    }
    const row = {
      followers: count,
      units,
      intervalMs,
      complete,
      missing,
      notices: arrivals.map((arrival) => arrival.notices),
      fromCommitResolvedMs: summary(fromResolved),
      fromCommitSentMs: summary(fromSent),
      writerCommitMs: summary(committed.map((entry) => entry.resolvedAt - entry.sentAt)),
      otherCores,
    };
    log(
      `bench: store postgres fan-out to ${count} follower process(es): p50 ${row.fromCommitResolvedMs.p50} ms, p99 ${row.fromCommitResolvedMs.p99} ms after the commit resolved (${row.fromCommitResolvedMs.n} arrivals, ${missing} missing)`,
    );
    rows.push(row);
  }
  return rows;
}

/** How far apart the workers' clocks read, from the IPC ping with the smallest round trip (should be within it). */
async function clockCheck(workers) {
  const offsets = [];
  for (const worker of workers) offsets.push(await clockOffset(worker));
  return offsets.map((offset) => ({ offsetMs: round(offset.offsetMs, 3), rttMs: round(offset.rttMs, 3) }));
}

export async function measureStoreScaleOut({
  repoRoot,
  log = () => {},
  gate,
  appendMs = 1_000,
  appendRounds = 3,
  processCounts = [1, 2, 3],
  replayEvents = 100_000,
  fanoutUnits = 150,
  fanoutIntervalMs = 20,
}) {
  const result = { shapes, sessionsPerProcess, replayPageSize, appendMs, appendRounds };
  const appending = { durationMs: appendMs, rounds: appendRounds, gate, log };
  const root = await mkdtemp(path.join(os.tmpdir(), 'tether-bench-store-'));
  // Durability on (the testkit's default turns it off): every commit flushed to disk, as a real deployment's.
  const postgres = await startTestPostgres({ durable: true, maxConnections: 200 });
  const { server_version: version, ...settings } = await postgres.settings();
  result.postgres = { version, settings };
  log(`bench: store: PostgreSQL ${version} (${JSON.stringify(settings)})`);
  try {
    // SQLite: one process (its data directory lock refuses a second).
    const sqlite = await startWorkers({
      repoRoot,
      count: 1,
      label: 'sqlite',
      storeFor: () => ({ kind: 'sqlite', dataDir: path.join(root, 'sqlite') }),
    });
    try {
      result.sqlite = {
        appends: await measureAppends(sqlite, [1], { ...appending, label: 'sqlite' }),
        replay: await measureReplay(sqlite, [1], { events: replayEvents, gate, log, label: 'sqlite' }),
      };
      result.hub = await measureHubLatency({ units: fanoutUnits, intervalMs: fanoutIntervalMs });
      log(
        `bench: store sqlite in-process hub: p50 ${result.hub.p50} ms, p99 ${result.hub.p99} ms after the commit resolved`,
      );
    } finally {
      await Promise.all(sqlite.map((worker) => worker.stop()));
    }

    // PostgreSQL, commits flushed to disk before they return (synchronous_commit on): appends,
    // replay, fan-out (4 processes: a writer and up to 3 followers).
    const durableUrl = await postgres.createDatabase();
    const durable = await startWorkers({
      repoRoot,
      count: Math.max(4, ...processCounts),
      label: 'pg',
      storeFor: (index) => ({ kind: 'postgres', url: durableUrl, ownerId: `bench-daemon-${index + 1}` }),
    });
    try {
      result.clock = await clockCheck(durable);
      result.postgresDurable = {
        appends: await measureAppends(durable.slice(0, Math.max(...processCounts)), processCounts, {
          ...appending,
          label: 'postgres',
        }),
        replay: await measureReplay(durable, processCounts, { events: replayEvents, gate, log, label: 'postgres' }),
      };
      result.fanOut = durable[1].coordination
        ? await measureFanOut(durable, processCounts, { units: fanoutUnits, intervalMs: fanoutIntervalMs, gate, log })
        : { skipped: 'this build of @tether/store-postgres has no coordination.onAppended' };
    } finally {
      await Promise.all(durable.map((worker) => worker.stop()));
    }

    // PostgreSQL with synchronous_commit off (the database's commits return before the WAL flush, as
    // SQLite's synchronous=NORMAL does): appends only.
    const asyncUrl = await postgres.createDatabase({ synchronousCommit: false });
    const asynchronous = await startWorkers({
      repoRoot,
      count: Math.max(...processCounts),
      label: 'pg-async',
      storeFor: (index) => ({ kind: 'postgres', url: asyncUrl, ownerId: `bench-async-daemon-${index + 1}` }),
    });
    try {
      result.postgresAsync = {
        appends: await measureAppends(asynchronous, processCounts, {
          ...appending,
          label: 'postgres (synchronous_commit off)',
        }),
      };
    } finally {
      await Promise.all(asynchronous.map((worker) => worker.stop()));
    }
    result.quietWaitMs = gate?.waitedMs ?? 0;
    return result;
  } finally {
    await postgres.stop();
    await rm(root, { recursive: true, force: true });
  }
}
