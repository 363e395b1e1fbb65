/** The sessions scenario's lines in the printed report (bench/lib/open-sessions.mjs measures them). */
import { fmt } from './report-lines.mjs';

const spreadText = (value) => (value ? `p50 ${fmt(value.p50, 1)} p99 ${fmt(value.p99, 1)} ms` : '-');
const verdict = (holds) => (holds ? 'holds' : 'DOES NOT HOLD');

export function openSessionsReportLines(result) {
  const { memory, reads, duringTurns, burst, fanOut, loopDelay, resume, lost } = result;
  const perSessionMb = memory.perIdleSession.rssKb / 1024;
  const whole =
    lost.turnsSucceeded === lost.turnsSubmitted &&
    lost.brokenLogs.length === 0 &&
    lost.fanOutMissing === 0 &&
    lost.listed.default === lost.listed.expected &&
    lost.orphansAfterStop === 0;
  return [
    '',
    `  Sessions scenario: ${result.sessions} open sessions in one daemon (own process, ${result.maxProcesses} processes, idle release ${result.idleReleaseMs} ms, agents' nice ${result.agentNice === 'default' ? 'the default' : `+${result.agentNice}`}), ${result.turns} turns of ${result.turnDeltas} deltas at once on random ones`,
    `    opened in ${fmt(result.openMs / 1000, 2)} s; daemon RSS after GC ${fmt(memory.noneRssKb / 1024, 1)} MiB with 0 -> ${fmt(memory.openRssKb / 1024, 1)} MiB with ${result.sessions}: ` +
      `${fmt(memory.perIdleSession.rssKb, 1)} KiB per idle open session (heap ${fmt(memory.perIdleSession.heapKb, 1)} KiB; goal < 1 MB: ${verdict(perSessionMb < 1)}); after the turns, all released: ${fmt(memory.perIdleSessionAfterTurns.rssKb, 1)} KiB`,
    `    with ${result.sessions} open: first page ${spreadText(reads.firstPage)}; whole listing ${spreadText(reads.fullListing)} (50 a page), ${spreadText(reads.fullListingLargestPages)} (500 a page); snapshot ${spreadText(reads.snapshot)}`,
    `    during the turns: first page ${spreadText(duringTurns.firstPage)}; snapshot ${spreadText(duringTurns.snapshot)}; most claude processes at once ${duringTurns.mostProcesses} (limit ${result.maxProcesses})`,
    `    ${result.turns} turns at once: all completed in ${fmt(burst.allCompletedMs / 1000, 2)} s; turn ${spreadText(burst.turnCompleted)}; wait for a process ${spreadText(burst.waitForProcess)}; ` +
      `${burst.queued.count} queued, positions seen ${burst.queued.positions.length > 0 ? `${burst.queued.positions[0]}..${burst.queued.positions.at(-1)}` : 'none'}`,
    `    CPU over the turns: the agents ${fmt(burst.cpu.agentsMs / 1000, 1)} s (${fmt(burst.cpu.agentsMsPerTurn, 0)} ms a turn), the daemon ${fmt(burst.cpu.daemonMs / 1000, 1)} s (${fmt(burst.cpu.daemonMsPerTurn, 1)} ms a turn); ` +
      `the agents had ${fmt(burst.cpu.agentsShareOfCores * 100, 1)} % of the ${burst.cpu.cores} cores`,
    `    fan-out, daemon publish -> SSE follower: ${spreadText(fanOut)} over ${fanOut.count ?? 0} events`,
    `    daemon event-loop delay p99: ${fmt(loopDelay.turns?.p99, 1)} ms over the turns (max ${fmt(loopDelay.turns?.max, 1)}), ${fmt(loopDelay.opening?.p99, 1)} ms while opening; /v1/metrics (100 ms sampling) p99 ${fmt(loopDelay.metricsP99Ms, 1)} ms`,
    `    resume (a released session's next turn -> first delta): ${spreadText(resume.firstDelta)}; a cold first turn ${spreadText(resume.coldFirstDelta)}; resume/cold ${fmt(resume.ratio.p50, 2)}; ${resume.withResumeFlag} of ${resume.pairs} started with --resume`,
    `    nothing lost or orphaned: ${verdict(whole)} — ${lost.turnsSucceeded}/${lost.turnsSubmitted} turns succeeded; ${lost.eventsChecked} events over ${lost.sessionsChecked} sessions, ${lost.brokenLogs.length} with a gap; ` +
      `${lost.fanOutMissing} published events not received; listing ${lost.listed.default}/${lost.listed.expected}; claude left after the daemon stopped ${lost.orphansAfterStop}`,
  ];
}
