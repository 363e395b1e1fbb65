// The store scenario's printed table (bench/lib/store-scale-out.mjs measures; this only formats).
import { fmt } from './report-lines.mjs';

const pad = (text, width) => String(text).padStart(width);

function appendLines(label, appends) {
  return appends.map(
    (row) =>
      `  ${label.padEnd(28)}${pad(row.processes, 4)}  ${`${row.shape} (${row.eventsPerUnit}/unit)`.padEnd(20)}${pad(fmt(row.eventsPerSecond), 10)}${pad(fmt(Math.max(...row.roundsEventsPerSecond)), 9)}${pad(fmt(row.unitsPerSecond), 9)}${pad(fmt(row.commitMs.p50, 2), 9)}${pad(fmt(row.commitMs.p99, 2), 9)}${pad(fmt(row.otherCores, 2), 8)}`,
  );
}

function replayLines(label, replay) {
  return replay.map(
    (row) =>
      `  ${label.padEnd(28)}${pad(row.processes, 4)}  ${row.msPerProcess
        .map((ms) => fmt(ms))
        .join(' / ')
        .padStart(
          20,
        )} ms${pad(fmt(row.eventsPerSecondPerProcess), 12)}${pad(fmt(row.aggregateEventsPerSecond), 12)}${pad(fmt(row.otherCores, 2), 8)}`,
  );
}

export function storeScaleOutLines(result) {
  const lines = [''];
  lines.push(
    `  store scenario: each "daemon" a separate Node process with its own store, writing only its own sessions (${result.sessionsPerProcess} each); PostgreSQL ${result.postgres.version}`,
  );
  lines.push(
    `  on this machine, fsync=${result.postgres.settings.fsync}, synchronous_commit=${result.postgres.settings.synchronous_commit} (the bench's own server, not the testkit's fsync-off one); SQLite: WAL, synchronous=NORMAL (no flush per commit)`,
  );
  lines.push('');
  lines.push(
    `  ${'appends (1 unit in flight)'.padEnd(28)}${pad('proc', 4)}  ${'unit'.padEnd(20)}${pad('events/s', 10)}${pad('best', 9)}${pad('units/s', 9)}${pad('p50 ms', 9)}${pad('p99 ms', 9)}${pad('other', 8)}`,
  );
  lines.push(...appendLines('SQLite', result.sqlite.appends));
  lines.push(...appendLines('PostgreSQL, sync commit', result.postgresDurable.appends));
  lines.push(...appendLines('PostgreSQL, async commit', result.postgresAsync.appends));
  lines.push('');
  lines.push(
    `  ${`replay, pages of ${result.replayPageSize}`.padEnd(28)}${pad('proc', 4)}  ${'time per process'.padStart(23)}${pad('ev/s each', 12)}${pad('ev/s all', 12)}${pad('other', 8)}`,
  );
  lines.push(...replayLines('SQLite', result.sqlite.replay));
  lines.push(...replayLines('PostgreSQL', result.postgresDurable.replay));
  lines.push('');
  if (result.fanOut.skipped) lines.push(`  cross-daemon fan-out: not measured (${result.fanOut.skipped})`);
  else {
    lines.push(
      `  ${'cross-daemon fan-out (ms)'.padEnd(28)}${pad('followers', 10)}${pad('p50', 8)}${pad('p99', 8)}${pad('max', 8)}${pad('n', 6)}${pad('other', 8)}  from commit sent p50/p99; missing`,
    );
    for (const row of result.fanOut)
      lines.push(
        `  ${'PostgreSQL, LISTEN/NOTIFY'.padEnd(28)}${pad(row.followers, 10)}${pad(fmt(row.fromCommitResolvedMs.p50, 2), 8)}${pad(fmt(row.fromCommitResolvedMs.p99, 2), 8)}${pad(fmt(row.fromCommitResolvedMs.max, 1), 8)}${pad(row.fromCommitResolvedMs.n, 6)}${pad(fmt(row.otherCores, 2), 8)}  ${fmt(row.fromCommitSentMs.p50, 2)}/${fmt(row.fromCommitSentMs.p99, 2)}; ${row.missing}`,
      );
  }
  if (result.hub)
    lines.push(
      `  SQLite has no cross-process fan-out (one process per data directory); in-process hub, commit resolved -> subscriber: p50 ${fmt(result.hub.p50, 3)} ms, p99 ${fmt(result.hub.p99, 3)} ms`,
    );
  lines.push(
    `  appends: median of ${result.appendRounds} interleaved rounds of ${fmt(result.appendMs / 1000, 1)} s, best = the fastest round (the least disturbed); p50/p99 over every commit`,
  );
  lines.push(
    `  other = cores the rest of the machine (other helpers' work) used meanwhile; waited ${fmt(result.quietWaitMs / 1000, 1)} s for quiet`,
  );
  const worstClock = Math.max(...result.clock.map((entry) => Math.abs(entry.offsetMs)));
  lines.push(
    `  clock: every process stamps CLOCK_MONOTONIC (process.hrtime); offsets measured over IPC all within ${fmt(worstClock, 3)} ms`,
  );
  return lines;
}
