// The benchmark's printed report: one block of lines per scenario, from the JSON the run writes
// (bench/run-benchmarks.mjs measures; this only formats).
import path from 'node:path';
import { zedPackage } from './acp-comparison.mjs';

export function fmt(value, digits = 0) {
  if (!Number.isFinite(value)) return 'n/a';
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

function pad(text, width, right = false) {
  return right ? String(text).padStart(width) : String(text).padEnd(width);
}

/** Prints the whole report: each scenario's table, then the machine's load and where the details are. */
export function printReport(report, thresholds) {
  const { machine, options } = report;
  const lines = [];
  lines.push('');
  lines.push(`Tether benchmark  ${report.date}`);
  lines.push(
    `  machine: ${machine.cpus} x ${machine.cpuModel}, ${machine.platform}; node ${machine.node}; claude ${machine.claude}`,
  );
  lines.push(
    `  launch parity (Tether's child argv + env, read from /proc, vs the raw loop's): ${report.launchParity.checked ? (report.launchParity.identical ? `identical${report.launchParity.ignored?.length ? ` (apart from ${report.launchParity.ignored.join(', ')}, Tether's random supervision marker)` : ''}` : `DIFFERENT: ${report.launchParity.differences.join('; ')}`) : report.launchParity.note}`,
  );
  if (report.all) lines.push(...mainReportLines(report, thresholds));
  if (report.lifecycle) lines.push(...lifecycleReportLines(report));
  if (report.transports) lines.push(...transportReportLines(report));
  if (report.daemon) lines.push(...daemonReportLines(report));
  if (report.load) lines.push(...loadReportLines(report.load));
  if (report.acp) lines.push(...acpReportLines(report));
  lines.push(`  load average ${fmt(report.loadAverage.start, 2)} -> ${fmt(report.loadAverage.end, 2)}`);
  lines.push(
    `  details: ${path.relative(process.cwd(), options.output) || options.output}; took ${fmt(report.durationSeconds, 1)} s`,
  );
  console.log(lines.join('\n'));
}

function mainReportLines(report, { target, quietCores }) {
  const { options, all, quiet } = report;
  const lines = [];
  lines.push(
    `  scenario: ${options.deltas} text deltas per turn from the fake API (own process); per repetition one raw-loop leg and one Tether leg,`,
  );
  lines.push(
    `            order alternating, each leg = a cold turn (spawn included) then a warm 2nd turn on the same process; ${options.repetitions} repetitions + 1 warm-up pair`,
  );
  lines.push('');
  lines.push(
    `  ${pad('medians (ms); ratio = Tether/raw, paired', 40)}${pad('raw (a)', 9, true)}${pad('Tether (b)', 12, true)}${pad('b/a', 8, true)}${pad('95% CI', 15, true)}${pad('IQR', 15, true)}${pad('min-max', 15, true)}${pad('target', 9, true)}`,
  );
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
    lines.push(
      `  quiet pairs only (${quiet.pairs} of ${options.repetitions}: rest of the machine < ${quietCores} cores during every leg):`,
    );
    lines.push(row('  turn, cold', quiet.metrics.coldTurn, false));
    lines.push(row('  cold spawn -> first delta', quiet.metrics.coldFirstDelta, false));
    lines.push(row('  turn, warm', quiet.metrics.warmTurn, false));
  } else {
    lines.push(`  quiet pairs only: ${quiet.pairs} of ${options.repetitions} (too few for their own lines)`);
  }
  lines.push(
    `  rest of the machine during the legs: median ${fmt(report.otherLoadCores.median, 2)} cores, max ${fmt(report.otherLoadCores.max, 2)}; waited ${fmt(report.quietWaitMs / 1000, 1)} s for quiet`,
  );
  lines.push('');
  const cpu = report.cpu;
  const cell = (label, raw, tether, note = '') =>
    `  ${pad(label, 40)}${pad(raw, 12, true)}${pad(tether, 16, true)}${note ? `   ${note}` : ''}`;
  lines.push(cell('warm turn, medians', 'raw (a)', 'Tether (b)'));
  lines.push(
    cell(
      'bench process CPU per 1,000 deltas',
      `${fmt(cpu.benchPer1k.raw, 1)} ms`,
      `${fmt(cpu.benchPer1k.tether, 1)} ms`,
      `Tether's own cost: +${fmt(cpu.tetherOverheadPer1k, 1)} ms per 1,000 deltas (paired)`,
    ),
  );
  lines.push(cell('claude CLI CPU per turn', `${fmt(cpu.claude.raw)} ms`, `${fmt(cpu.claude.tether)} ms`));
  lines.push(cell('fake API CPU per turn', `${fmt(cpu.api.raw)} ms`, `${fmt(cpu.api.tether)} ms`));
  lines.push(
    cell(
      'agent deltas (text chars)',
      `${fmt(report.counts.rawDeltas)} (${fmt(report.counts.rawTextChars)})`,
      `in ${fmt(report.counts.tetherDeltaEvents)} events (${fmt(report.counts.tetherTextChars)})`,
      `${fmt(report.counts.tetherDelivered)} events delivered in all; a delta event may carry several deltas`,
    ),
  );
  lines.push(
    cell(
      'store commits per turn (Tether)',
      '',
      fmt(report.writer.commits),
      `median batch ${fmt(report.writer.medianBatch)} event(s), mean ${fmt(report.writer.meanBatch, 1)}; ${fmt(report.writer.commitMs, 1)} ms wall inside store.commit`,
    ),
  );
  if (report.counts.tetherDiagnostics.length > 0)
    lines.push(`  Tether diagnostics seen: ${report.counts.tetherDiagnostics.join(', ')}`);
  if (report.store) {
    lines.push('');
    lines.push(
      `  Store alone (${options.deltas} run.message_delta events, SQLite in a temp dir; medians of ${report.store.rounds} rounds)`,
    );
    lines.push(`    store.commit (events + session row per transaction), events/s by batch size:`);
    lines.push(
      `      ${report.store.direct.map((entry) => `${entry.batchSize}: ${fmt(entry.eventsPerSecond)}`).join('   ')}`,
    );
    lines.push(`    runtime + mock provider -> store -> 1 subscriber, events/s (turn ms):`);
    lines.push(
      `      ${report.store.runtime.map((entry) => `${entry.variant}: ${fmt(entry.eventsPerSecond)} (${fmt(entry.turnMs, 1)} ms)`).join('   ')}`,
    );
  }
  lines.push('');
  const verdict = (stats) => {
    const [low, high] = stats.ratio.ci95;
    const met = stats.ratio.median <= target ? 'met' : 'missed';
    const resolved =
      high <= target
        ? 'the whole 95% CI is within it'
        : low > target
          ? 'the whole 95% CI is above it'
          : 'the 95% CI straddles it: more repetitions needed to be sure';
    return `${met} (${fmt(stats.ratio.median, 3)}; ${resolved})`;
  };
  lines.push(
    `  targets (median paired ratio <= ${target}): cold turn ${verdict(all.coldTurn)}; cold first delta ${verdict(all.coldFirstDelta)}`,
  );
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
  const single = (label, stats) =>
    `  ${pad(label, 52)}${pad('', 10, true)}${pad(fmt(stats.median, 1), 12, true)}   (IQR ${fmt(stats.p25, 1)}-${fmt(stats.p75, 1)}, min-max ${fmt(stats.min, 1)}-${fmt(stats.max, 1)}, n ${stats.n})`;
  const load = (entry) =>
    `quiet pairs ${entry.quietPairs} of ${entry.otherLoadCores.n}; rest of the machine median ${fmt(entry.otherLoadCores.median, 2)} cores, max ${fmt(entry.otherLoadCores.max, 2)}`;
  lines.push(
    `  Lifecycle scenarios (${options.lifecycleRepetitions} pairs each, sequential, order alternating; medians in ms; ratio = median of paired b/a)`,
  );
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
    lines.push(
      `    cold path: openSession resolves in ${fmt(entry.openSession.median, 1)} ms; the CLI is spawned ${fmt(entry.spawnAfter.tether.median, 1)} ms after openSession was called (raw: spawn() returns after ${fmt(entry.spawnAfter.raw.median, 1)} ms)`,
    );
    if (entry.warmPool) {
      lines.push(row('warm pool: raw cold spawn vs openSession -> 1st delta', entry.warmPoolFirstDelta));
      lines.push(row('warm pool: Tether cold (a) vs warm pool (b)', entry.warmPoolVsTetherCold));
      lines.push(row('warm pool: raw cold turn vs openSession -> completed', entry.warmPoolTurn));
      lines.push(
        `    warm pool: spares 1; waited a median ${fmt(entry.spareWaitMs.median)} ms (outside the timings) for the spare to be idle before each triple`,
      );
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
    lines.push(
      `    busy close outcomes: ${entry.busyCloseOutcomes.join(', ')}; process gone when closeSession resolved: ${entry.processGoneAtResolve} of ${entry.otherLoadCores.n}; process_stopped reasons: ${entry.stoppedReasons.join(', ')}; raw exit codes idle ${entry.rawExitCodes.idle.join('/')}, busy ${entry.rawExitCodes.busy.join('/')}`,
    );
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
    lines.push(
      `    outcomes: ${entry.outcomes.join(', ')}; process_stopped reasons: ${entry.stoppedReasons.join(', ')}; ${load(entry)}`,
    );
  }
  if (lifecycle.memory) {
    const { alive, released, ratio } = lifecycle.memory;
    const mib = (kb) => `${fmt(kb / 1024, 1)} MiB`;
    lines.push(
      `  memory per idle open session (${alive.sessions} sessions, each after one turn)   bench RSS delta + claude RSS = per session`,
    );
    for (const variant of [alive, released]) {
      lines.push(
        `    ${pad(variant.variant === 'alive' ? 'process alive' : 'process released (idleReleaseMs 250)', 40)}${pad(mib(variant.benchRssDeltaKb), 12, true)} + ${pad(mib(variant.claudeRssKb), 12, true)} (${variant.claudeProcesses} proc) = ${mib(variant.perSessionKb)} (heap ${fmt(variant.perSessionHeapBytes / 1024, 1)} KiB)`,
      );
    }
    lines.push(
      `    ratio alive/released per session: ${fmt(ratio)} (a released session costs only the host's bookkeeping; the claude process is ~all of an alive one)`,
    );
  }
  if (lifecycle.soak) {
    const soak = lifecycle.soak;
    lines.push(
      `  soak: ${soak.cycles} open/turn/close cycles through one runtime in ${fmt(soak.totalMs / 1000, 1)} s; per cycle median ${fmt(soak.cycle.median)} ms, p95 ${fmt(soak.p95CycleMs)} ms, max ${fmt(soak.cycle.max)} ms`,
    );
    lines.push(
      `    fds ${soak.before.fds} before, ${soak.after.fds} after (runtime up), ${soak.afterShutdown.fds} after shutdown; live claude with the bench HOME: ${soak.after.claude} after, ${soak.afterShutdown.claude} after shutdown`,
    );
    lines.push(
      `    bench RSS ${fmt(soak.before.rssKb / 1024, 1)} -> ${fmt(soak.after.rssKb / 1024, 1)} MiB, heap after GC ${fmt(soak.before.heapBytes / 2 ** 20, 1)} -> ${fmt(soak.after.heapBytes / 2 ** 20, 1)} MiB (${fmt((soak.after.heapBytes - soak.before.heapBytes) / 1024 / soak.cycles, 1)} KiB per cycle${soak.halfway ? `; second half ${fmt((soak.after.heapBytes - soak.halfway.heapBytes) / 1024 / (soak.cycles - soak.halfway.cycles), 1)} KiB per cycle` : ''}); process not gone at close: ${soak.notGoneAtResolve}; stop reasons ${JSON.stringify(soak.stoppedReasons)}; sessions listed ${soak.sessionsListed}`,
    );
  }
  lines.push(`  lifecycle: waited ${fmt(lifecycle.quietWaitMs / 1000, 1)} s for quiet`);
  return lines;
}

function transportReportLines(report) {
  const { transports: entry, options } = report;
  const lines = [''];
  const row = (label, stats, scale = 1, digits = 0) =>
    `  ${pad(label, 52)}${pad(fmt(stats.cli.median / scale, digits), 10, true)}${pad(fmt(stats.sdk.median / scale, digits), 10, true)}${pad(fmt(stats.ratio.median, 3), 8, true)}` +
    `${pad(`${fmt(stats.ratio.ci95[0], 2)}-${fmt(stats.ratio.ci95[1], 2)}`, 13, true)}${pad(`${fmt(stats.ratio.p25, 2)}-${fmt(stats.ratio.p75, 2)}`, 13, true)}${pad(`${fmt(stats.ratio.min, 2)}-${fmt(stats.ratio.max, 2)}`, 13, true)}${pad(stats.ratio.n, 4, true)}`;
  const both = (values, format = (value) => fmt(value)) => `cli ${format(values.cli)} / sdk ${format(values.sdk)}`;
  const mib = (kb) => `${fmt(kb / 1024, 1)} MiB`;
  lines.push(
    `  Transport scenario: the main scenario's turns (a cold then a warm turn of ${options.deltas} deltas) through the Claude provider's cli and sdk transports;`,
  );
  lines.push(
    `    each leg a fresh host process (bench/transport-host.mjs: runtime over SQLite, one subscriber); ${entry.repetitions} pairs + 1 warm-up leg each, order alternating`,
  );
  lines.push(
    `  ${pad('medians; ratio = sdk/cli, paired', 52)}${pad('cli (a)', 10, true)}${pad('sdk (b)', 10, true)}${pad('b/a', 8, true)}${pad('95% CI', 13, true)}${pad('IQR', 13, true)}${pad('min-max', 13, true)}${pad('n', 4, true)}`,
  );
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
  lines.push(
    `    host = the Node process running Tether (for sdk also the Agent SDK's query()), RSS ${both(entry.hostBaselineRssKb, mib)} before its runtime started;`,
  );
  lines.push(
    `    agent = every process under the host, read while idle after the 2nd turn: cli ${entry.agentProcesses.cli.join(', ')} / sdk ${entry.agentProcesses.sdk.join(', ')}`,
  );
  lines.push(
    `    delta events (text chars) per warm turn ${both(entry.deltaEvents)} (${both(entry.textChars)}), events delivered ${both(entry.delivered)}; runtime.shutdown() ${both(entry.shutdownMs)} ms, host exit after its result ${both(entry.exitAfterResultMs)} ms, hosts kept alive: ${entry.lingered}`,
  );
  const diagnostics = [
    ...entry.diagnostics.cli.map((code) => `cli ${code}`),
    ...entry.diagnostics.sdk.map((code) => `sdk ${code}`),
  ];
  if (diagnostics.length > 0) lines.push(`    diagnostics seen: ${diagnostics.join(', ')}`);
  if (entry.launch.checked) {
    const { onlyCli, onlySdk } = entry.launch;
    const argv =
      onlyCli.length + onlySdk.length === 0
        ? 'the same arguments'
        : `arguments only cli passes: ${onlyCli.join(' ') || 'none'}, only sdk: ${onlySdk.join(' ') || 'none'}`;
    lines.push(
      `    the CLI as launched (read from /proc), sdk against cli: ${argv} (order and --flag=value forms aside); environment differs in ${entry.launch.environmentChanged.join(', ') || 'nothing'}`,
    );
  }
  lines.push(
    `    quiet pairs ${entry.quietPairs} of ${entry.repetitions}, rest of the machine median ${fmt(entry.otherLoadCores.median, 2)} cores, max ${fmt(entry.otherLoadCores.max, 2)}; waited ${fmt(entry.quietWaitMs / 1000, 1)} s for quiet; processes with the bench HOME left after a leg: ${entry.leftoverProcesses}`,
  );
  return lines;
}

function daemonReportLines(report) {
  const { daemon } = report;
  const mib = (kb) => `${fmt(kb / 1024, 1)} MiB`;
  const lines = [''];
  lines.push(
    `  Daemon scenario: ${daemon.sessions} concurrent sessions, each a cold then a warm turn of ${daemon.turnDeltas} deltas, all ${daemon.sessions} submitted at once;`,
  );
  lines.push(
    `    daemon = bench/daemon-server.mjs (own process), @tether/client submitTurn -> run.completed on its SSE subscription; in-process = runtime in the bench process;`,
  );
  lines.push(
    `    ${daemon.repetitions} repetitions, legs alternating; p50/p99 pooled over ${daemon.cold.daemon.n} turns per leg; ratio = median over repetitions of daemon/in-process (95% CI)`,
  );
  lines.push(
    `  ${pad('turn time (ms)', 36)}${pad('in-proc p50', 12, true)}${pad('p99', 8, true)}${pad('daemon p50', 12, true)}${pad('p99', 8, true)}${pad('p50 ratio', 11, true)}${pad('95% CI', 13, true)}${pad('p99 ratio', 11, true)}${pad('95% CI', 13, true)}`,
  );
  for (const [label, entry] of [
    ['cold (spawn + turn), 20 at once', daemon.cold],
    ['warm (2nd turn), 20 at once', daemon.warm],
  ]) {
    lines.push(
      `  ${pad(label.replace('20', String(daemon.sessions)), 36)}${pad(fmt(entry.inProcess.p50), 12, true)}${pad(fmt(entry.inProcess.p99), 8, true)}${pad(fmt(entry.daemon.p50), 12, true)}${pad(fmt(entry.daemon.p99), 8, true)}` +
        `${pad(fmt(entry.p50Ratio.median, 3), 11, true)}${pad(`${fmt(entry.p50Ratio.ci95[0], 2)}-${fmt(entry.p50Ratio.ci95[1], 2)}`, 13, true)}${pad(fmt(entry.p99Ratio.median, 3), 11, true)}${pad(`${fmt(entry.p99Ratio.ci95[0], 2)}-${fmt(entry.p99Ratio.ci95[1], 2)}`, 13, true)}`,
    );
  }
  const memory = daemon.memory;
  const loop = daemon.loopDelay;
  lines.push(
    `    event-loop delay in the warm round (p99 / max, ms): runtime's process: in-process (bench) ${fmt(loop.inProcessHostP99, 1)} / ${fmt(loop.inProcessHostMax, 1)}, daemon ${fmt(loop.daemonHostP99, 1)} / ${fmt(loop.daemonHostMax, 1)}; client (bench) in the daemon leg ${fmt(loop.clientP99, 1)} / ${fmt(loop.clientMax, 1)}`,
  );
  lines.push(
    `    host CPU for the warm round: in-process ${fmt(daemon.hostCpu.warmInProcessMs)} ms; daemon process ${fmt(daemon.hostCpu.warmDaemonMs)} ms + client (bench) ${fmt(daemon.hostCpu.warmClientMs)} ms; text chars per turn seen: ${daemon.warm.textChars.join('/')} in ${Math.min(...daemon.warm.deltaEvents)}-${Math.max(...daemon.warm.deltaEvents)} delta events`,
  );
  lines.push(
    `    the ${daemon.sessions} claude CLIs used ${fmt(daemon.hostCpu.warmClaudeInProcessMs)} ms (in-process leg) / ${fmt(daemon.hostCpu.warmClaudeDaemonMs)} ms (daemon leg) of CPU in the warm round (for scale against the host CPU above)`,
  );
  lines.push(
    `    daemon RSS: ${mib(memory.daemonIdleRssKb)} idle, ${mib(memory.daemonRssKb)} with ${daemon.sessions} sessions after their turns (peak ${mib(memory.daemonHwmKb)}); claude: ${fmt(memory.claudeCount)} processes, ${mib(memory.claudeRssKb)} (${mib(memory.claudeRssKb / Math.max(1, memory.claudeCount))} each; peaks summed ${mib(memory.claudeHwmKb)})`,
  );
  lines.push(
    `    daemon close with ${daemon.sessions} live CLIs: ${fmt(daemon.daemonCloseMs)} ms; quiet pairs ${daemon.quietPairs} of ${daemon.pairs.length}, rest of the machine median ${fmt(daemon.otherLoadCores.median, 2)} cores; waited ${fmt(daemon.quietWaitMs / 1000, 1)} s for quiet`,
  );
  const fanout = daemon.fanout;
  lines.push(
    `  fan-out: one session, a turn of ${report.options.daemon.fanoutDeltas} deltas, ${report.options.daemon.fanoutTurns} turns per variant; latency = receipt in the bench process - publish in the daemon (both CLOCK_MONOTONIC;`,
  );
  lines.push(
    `    IPC check: offset ${fmt(fanout.clock.offsetMs, 3)} ms within a ${fmt(fanout.clock.rttMs, 3)} ms round trip, at the end ${fmt(fanout.clockAfter.offsetMs, 3)} ms); over every (event x subscriber) delivery`,
  );
  lines.push(
    `  ${pad('subscribers', 30)}${pad('deliveries', 11, true)}${pad('p50', 8, true)}${pad('p99', 8, true)}${pad('max', 8, true)}${pad('1st rcpt p50', 13, true)}${pad('spread p50/p99', 16, true)}${pad('emit->pub p50/p99', 19, true)}${pad('emit->rcpt p99', 15, true)}${pad('turn', 7, true)}${pad('CPU daemon/bench', 18, true)}${pad('µs/delivery', 13, true)}`,
  );
  for (const variant of fanout.variants) {
    lines.push(
      `  ${pad(`${variant.subscribers} x ${variant.kind === 'raw' ? 'raw http' : '@tether/client'}${variant.delayMs ? `, paced ${variant.delayMs} ms` : ''}`, 30)}${pad(fmt(variant.deliveries), 11, true)}${pad(fmt(variant.publishToReceipt.p50, 2), 8, true)}${pad(fmt(variant.publishToReceipt.p99, 1), 8, true)}${pad(fmt(variant.publishToReceipt.max, 1), 8, true)}` +
        `${pad(fmt(variant.publishToFirstReceipt.p50, 2), 13, true)}${pad(`${fmt(variant.spread.p50, 1)}/${fmt(variant.spread.p99, 1)}`, 16, true)}${pad(`${fmt(variant.emitToPublish.p50, 1)}/${fmt(variant.emitToPublish.p99, 1)}`, 19, true)}` +
        `${pad(fmt(variant.emitToReceipt.p99, 1), 15, true)}${pad(fmt(variant.turnMs.median), 7, true)}${pad(`${fmt(variant.cpu.daemonMs)}/${fmt(variant.cpu.benchMs)}`, 18, true)}${pad(fmt((variant.cpu.daemonMs * 1000 * variant.turns) / variant.deliveries, 1), 13, true)}`,
    );
  }
  lines.push(
    `    columns: p50/p99/max publish -> receipt; 1st rcpt = publish -> the first subscriber's receipt; spread = first to last subscriber's receipt of one event;`,
  );
  lines.push(
    `    emit->pub = provider emitted the delta -> published in the event carrying its first character (writer batching + commit); turn = submit -> every subscriber has run.completed; CPU per turn (ms), µs/delivery = daemon CPU / deliveries`,
  );
  lines.push(
    `    missing deliveries ${fanout.variants.reduce((sum, variant) => sum + variant.missing, 0)}, overflows ${fanout.variants.reduce((sum, variant) => sum + variant.overflows, 0)}, subscriber errors ${fanout.variants.reduce((sum, variant) => sum + variant.errors, 0)}; tether_subscribers gauge ${fanout.variants.map((variant) => variant.subscriberGauge).join('/')}`,
  );
  lines.push(
    `    daemon RSS: ${mib(fanout.daemonIdleRssKb)} with 1 session; per variant: subscribers connected -> after its turns (heap used) -> after a full GC (heap used); peak`,
  );
  for (const variant of fanout.variants) {
    lines.push(
      `      ${pad(`${variant.subscribers} x ${variant.kind}${variant.delayMs ? `, paced ${variant.delayMs} ms` : ''}`, 28)}${mib(variant.daemonConnectedRssKb)} -> ${mib(variant.daemonRssKb)} (${mib(variant.daemonHeapUsedBytes / 1024)}) -> ${mib(variant.daemonAfterGcRssKb)} (${mib(variant.daemonAfterGcHeapUsedBytes / 1024)}); peak ${mib(variant.daemonHwmKb)}`,
    );
  }
  lines.push(
    `    cleanup: claude processes with the bench HOME killed after a leg: ${daemon.leftoverProcesses}; live at the end: ${daemon.finalLiveWithHome}`,
  );
  return lines;
}

function loadReportLines(load) {
  const lines = [''];
  lines.push(
    `  Load scenario: ${load.sessions} open sessions in a daemon (own process, ${load.maxProcesses} processes), ${load.turns} short turns at once on ${load.turns} random ones`,
  );
  lines.push(
    `    opened in ${fmt(load.openMs / 1000, 2)} s; last turn completed after ${fmt(load.lastTurnCompletedMs / 1000, 2)} s (turn p50 ${fmt(load.turnCompleted.p50)} p99 ${fmt(load.turnCompleted.p99)} ms)`,
  );
  lines.push(
    `    wait for a process (run.started -> session.process_started): p50 ${fmt(load.waitForProcess.p50)} p99 ${fmt(load.waitForProcess.p99)} ms; ${load.queued.count} queued: p50 ${fmt(load.queued.wait?.p50 ?? NaN)} p99 ${fmt(load.queued.wait?.p99 ?? NaN)} ms`,
  );
  lines.push(
    `    daemon memory per idle open session: ${fmt(load.memory.perIdleSession.rssKb, 1)} KiB RSS (${fmt(load.memory.perIdleSession.heapKb, 1)} KiB heap), after a full GC; claude processes alive at the end: ${load.claudeAliveAtEnd}`,
  );
  return lines;
}

/** The ACP scenario (bench/lib/acp-comparison.mjs): tether acp beside the reference adapter. */
function acpReportLines(report) {
  const entry = report.acp;
  const row = (label, stats, scale = 1, digits = 0) =>
    `  ${pad(label, 52)}${pad(fmt(stats.zed.median / scale, digits), 10, true)}${pad(fmt(stats.tether.median / scale, digits), 10, true)}${pad(fmt(stats.ratio.median, 3), 8, true)}` +
    `${pad(`${fmt(stats.ratio.ci95[0], 2)}-${fmt(stats.ratio.ci95[1], 2)}`, 13, true)}${pad(`${fmt(stats.ratio.min, 2)}-${fmt(stats.ratio.max, 2)}`, 13, true)}${pad(stats.ratio.n, 4, true)}`;
  const both = (values) => `zed ${values.zed.join(', ')} / tether ${values.tether.join(', ')}`;
  return [
    '',
    `  ACP scenario: a cold then a warm prompt (${report.options.deltas} deltas each) from a minimal ACP client over stdio, to`,
    `    ${zedPackage} (zed; Agent SDK inside, CLAUDE_CODE_EXECUTABLE = the same claude) and tether acp (in-process, cli transport);`,
    `    each leg a fresh agent process; ${entry.repetitions} pairs + 1 warm-up leg each, order alternating`,
    `  ${pad('medians; ratio = tether/zed, paired', 52)}${pad('zed (a)', 10, true)}${pad('tether (b)', 10, true)}${pad('b/a', 8, true)}${pad('95% CI', 13, true)}${pad('min-max', 13, true)}${pad('n', 4, true)}`,
    row('spawn -> initialize answered (ms)', entry.start),
    row('session/new answered (ms)', entry.newSession),
    row('cold: session/prompt -> first agent_message_chunk (ms)', entry.coldFirstChunk),
    row('cold: session/prompt -> answer (ms)', entry.coldTurn),
    row('warm: session/prompt -> first agent_message_chunk (ms)', entry.warmFirstChunk, 1, 1),
    row('warm: session/prompt -> answer (ms)', entry.warmTurn),
    row('new session, prompted 1.5 s later -> first chunk (ms)', entry.writtenFirstChunk),
    row('agent process CPU, cold turn (ms)', entry.agentCpuCold),
    row('agent process CPU, warm turn (ms)', entry.agentCpuWarm),
    row('claude CPU under the agent, warm turn (ms)', entry.claudeCpuWarm),
    row('agent process RSS after the turns (MiB)', entry.agentRss, 1024, 1),
    row('agent process peak RSS, VmHWM (MiB)', entry.agentPeak, 1024, 1),
    row('claude processes RSS after the turns (MiB)', entry.claudeRss, 1024, 1),
    row('stdin closed -> agent exited (ms)', entry.exitMs),
    `    stop reasons ${both(entry.stopReasons)}; chunks per warm turn ${both(entry.chunks)}; words ${both(entry.words)}`,
    `    processes under the agent ${both(entry.processes)}; exit ${both(entry.exits)}; processes with the bench HOME left after a leg: ${entry.leftoverProcesses}`,
    `    quiet pairs ${entry.quietPairs} of ${entry.repetitions}, rest of the machine median ${fmt(entry.otherLoadCores.median, 2)} cores; waited ${fmt(entry.quietWaitMs / 1000, 1)} s for quiet`,
  ];
}
