/** The daemon scenario's figures, drawn from the raw result measureDaemon returns. */
import { quantile, summarize, summarizeRatios } from './stats.mjs';

/**
 * The figures: per turn kind (cold, warm), each leg's p50/p99 pooled over every repetition's turns,
 * and per repetition the ratios daemon/in-process of the round's p50 and of its p99 (their median
 * over repetitions, with the bootstrap CI when there are at least 3).
 */
export function summarizeDaemon(result) {
  const { pairs } = result;
  const kind = (name) => {
    const pooled = (leg) => {
      const values = pairs.flatMap((pair) => pair[leg][name].turnMs);
      return { n: values.length, p50: quantile(values, 0.5), p99: quantile(values, 0.99), max: Math.max(...values) };
    };
    const per = (leg, q) => pairs.map((pair) => quantile(pair[leg][name].turnMs, q));
    const ratio = (q) => summarizeRatios(per('daemon', q).map((value, index) => value / per('inProcess', q)[index]));
    return {
      inProcess: pooled('inProcess'),
      daemon: pooled('daemon'),
      p50Ratio: ratio(0.5),
      p99Ratio: ratio(0.99),
      wallMs: {
        inProcess: summarize(pairs.map((pair) => pair.inProcess[name].wallMs)).median,
        daemon: summarize(pairs.map((pair) => pair.daemon[name].wallMs)).median,
      },
      textChars: [
        ...new Set(pairs.flatMap((pair) => [...pair.inProcess[name].textChars, ...pair.daemon[name].textChars])),
      ],
      deltaEvents: [
        ...new Set(pairs.flatMap((pair) => [...pair.inProcess[name].deltaEvents, ...pair.daemon[name].deltaEvents])),
      ],
    };
  };
  const median = (pick) => summarize(pairs.map(pick)).median;
  return {
    ...result,
    cold: kind('cold'),
    warm: kind('warm'),
    quietPairs: pairs.filter((pair) => pair.quiet).length,
    otherLoadCores: summarize(pairs.map((pair) => pair.otherLoadCores)),
    memory: {
      daemonIdleRssKb: median((pair) => pair.daemon.daemon.idleRssKb),
      daemonRssKb: median((pair) => pair.daemon.daemon.rssKb),
      daemonHwmKb: median((pair) => pair.daemon.daemon.hwmKb),
      claudeCount: median((pair) => pair.daemon.claude.count),
      claudeRssKb: median((pair) => pair.daemon.claude.rssKb),
      claudeHwmKb: median((pair) => pair.daemon.claude.hwmKb),
      inProcessClaudeRssKb: median((pair) => pair.inProcess.claude.rssKb),
      inProcessBenchRssDeltaKb: median((pair) => pair.inProcess.benchRssDeltaKb),
    },
    loopDelay: {
      inProcessHostP99: median((pair) => pair.inProcess.loopDelay.host.p99),
      inProcessHostMax: median((pair) => pair.inProcess.loopDelay.host.max),
      daemonHostP99: median((pair) => pair.daemon.loopDelay.host.p99),
      daemonHostMax: median((pair) => pair.daemon.loopDelay.host.max),
      clientP99: median((pair) => pair.daemon.loopDelay.client.p99),
      clientMax: median((pair) => pair.daemon.loopDelay.client.max),
    },
    hostCpu: {
      warmInProcessMs: median((pair) => pair.inProcess.hostCpu.warmMs),
      warmDaemonMs: median((pair) => pair.daemon.hostCpu.warmDaemonMs),
      warmClientMs: median((pair) => pair.daemon.hostCpu.warmClientMs),
      warmClaudeInProcessMs: median((pair) => pair.inProcess.hostCpu.warmClaudeMs),
      warmClaudeDaemonMs: median((pair) => pair.daemon.hostCpu.warmClaudeMs),
    },
    daemonCloseMs: median((pair) => pair.daemon.closeMs),
  };
}
