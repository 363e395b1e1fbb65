/**
 * Turn time with concurrent sessions: the same N sessions' cold and warm rounds through the daemon
 * (@tether/client over HTTP and SSE) and through a runtime in the bench process.
 */
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { createTetherClient } from '@tether/client';
import { claudeUnder, cpuOf, fakeApiTree } from './claude-processes.mjs';
import { startDaemonProcess } from './daemon-process.mjs';
import { memoryOf, processCpuMs, rssKb, selfCpuMs } from './proc.mjs';
import { turnPrompt } from './scripted-prompts.mjs';
import { quantile } from './stats.mjs';
import { EventWatch, startTether } from './tether-harness.mjs';

/** One round: every session's turn submitted at once; per session submit called → run.completed received. */
async function concurrentRound(sessions, submit, prompt) {
  const started = performance.now();
  const results = await Promise.all(
    sessions.map(async ({ sessionId, watch }) => {
      const mark = watch.mark();
      const start = performance.now();
      const { runId } = await submit({ sessionId, input: [{ type: 'text', text: prompt }] });
      const completed = await watch.waitFor(
        (event) => event.type === 'run.completed' && event.runId === runId,
        mark,
        180_000,
      );
      if (completed.event.outcome !== 'succeeded')
        throw new Error(
          `daemon scenario: a run ended ${completed.event.outcome}: ${JSON.stringify(completed.event.error ?? null)}`,
        );
      // One event may carry several of the agent's deltas: count the text, and the events apart.
      const deltas = watch.events
        .slice(mark)
        .filter((entry) => entry.event.type === 'run.message_delta' && entry.event.runId === runId);
      const textChars = deltas.reduce((sum, entry) => sum + entry.event.text.length, 0);
      return { turnMs: completed.at - start, deltaEvents: deltas.length, textChars };
    }),
  );
  return {
    turnMs: results.map((result) => result.turnMs),
    deltaEvents: results.map((result) => result.deltaEvents),
    textChars: results.map((result) => result.textChars),
    wallMs: performance.now() - started,
  };
}

/** Event-loop delay of this process from now to stop() (2 ms sampling), in ms. */
function startLoopMonitor() {
  const histogram = monitorEventLoopDelay({ resolution: 2 });
  histogram.enable();
  return {
    stop() {
      histogram.disable();
      return {
        p50: histogram.percentile(50) / 1e6,
        p99: histogram.percentile(99) / 1e6,
        max: histogram.max / 1e6,
        mean: histogram.mean / 1e6,
      };
    },
  };
}

export function roundStats(round) {
  return {
    p50: quantile(round.turnMs, 0.5),
    p99: quantile(round.turnMs, 0.99),
    max: Math.max(...round.turnMs),
    wallMs: round.wallMs,
  };
}

export async function inProcessLeg(context, { sessions, turnDeltas }) {
  const tether = await startTether({
    claudePath: context.claudePath,
    environment: context.environment,
    provider: { maxProcesses: sessions },
  });
  const list = [];
  try {
    const rssBefore = rssKb();
    for (let index = 0; index < sessions; index += 1) {
      const { sessionId } = await tether.runtime.openSession({
        workspace: { kind: 'directory', path: context.workspace },
      });
      const watch = new EventWatch(tether.runtime, sessionId);
      list.push({ sessionId, watch });
    }
    await Promise.all(list.map(({ watch }) => watch.waitFor(() => true, 0, 10_000)));
    const submit = (input) => tether.runtime.submitTurn(input);
    const cpuCold = selfCpuMs();
    const cold = await concurrentRound(list, submit, turnPrompt(turnDeltas));
    const claudeCpu = cpuOf(claudeUnder(process.pid, fakeApiTree(context.apiPid)).pids);
    const cpuWarm = selfCpuMs();
    const loop = startLoopMonitor();
    const warm = await concurrentRound(list, submit, turnPrompt(turnDeltas));
    const hostLoop = loop.stop();
    const hostCpu = { coldMs: cpuWarm - cpuCold, warmMs: selfCpuMs() - cpuWarm, warmClaudeMs: claudeCpu() };
    const claude = claudeUnder(process.pid, fakeApiTree(context.apiPid));
    return {
      cold,
      warm,
      hostCpu,
      loopDelay: { host: hostLoop },
      benchRssDeltaKb: rssKb() - rssBefore,
      claude: { count: claude.count, rssKb: claude.rssKb, hwmKb: claude.hwmKb },
    };
  } finally {
    for (const { watch } of list) await watch.stop();
    await tether.dispose();
  }
}

export async function daemonLeg(context, { sessions, turnDeltas, repoRoot }) {
  const daemon = await startDaemonProcess({
    repoRoot,
    claudePath: context.claudePath,
    environment: context.environment,
    maxProcesses: sessions,
  });
  const list = [];
  let stop;
  try {
    const client = createTetherClient({ url: daemon.url, token: daemon.token });
    await sleep(200);
    const idle = memoryOf(daemon.pid);
    for (let index = 0; index < sessions; index += 1) {
      const { sessionId } = await client.openSession({ workspace: { kind: 'directory', path: context.workspace } });
      // EventWatch only needs subscribe(sessionId, { afterSeq, signal }): the client's has that shape.
      const watch = new EventWatch(client, sessionId);
      list.push({ sessionId, watch });
    }
    // Every SSE stream is open (it replayed session.opened) before the first submit.
    await Promise.all(list.map(({ watch }) => watch.waitFor(() => true, 0, 10_000)));
    const submit = (input) => client.submitTurn(input);
    const cpu = () => ({ bench: selfCpuMs(), daemon: processCpuMs(daemon.pid) });
    const cpuCold = cpu();
    const cold = await concurrentRound(list, submit, turnPrompt(turnDeltas));
    const claudeCpu = cpuOf(claudeUnder(daemon.pid).pids);
    const cpuWarm = cpu();
    await daemon.request({ type: 'loop-start' });
    const loop = startLoopMonitor();
    const warm = await concurrentRound(list, submit, turnPrompt(turnDeltas));
    const clientLoop = loop.stop();
    const { p50, p99, max, mean } = await daemon.request({ type: 'loop-stop' });
    const cpuEnd = cpu();
    const hostCpu = {
      coldMs: cpuWarm.bench - cpuCold.bench + (cpuWarm.daemon - cpuCold.daemon),
      warmMs: cpuEnd.bench - cpuWarm.bench + (cpuEnd.daemon - cpuWarm.daemon),
      warmDaemonMs: cpuEnd.daemon - cpuWarm.daemon,
      warmClientMs: cpuEnd.bench - cpuWarm.bench,
      warmClaudeMs: claudeCpu(),
    };
    await sleep(200);
    const loaded = memoryOf(daemon.pid);
    const claude = claudeUnder(daemon.pid);
    for (const { watch } of list) await watch.stop();
    list.length = 0;
    stop = await daemon.stop();
    return {
      cold,
      warm,
      hostCpu,
      // host = where the runtime runs (the daemon process); client = the bench process with the SSE subscribers.
      loopDelay: { host: { p50, p99, max, mean }, client: clientLoop },
      daemon: { idleRssKb: idle.rssKb, rssKb: loaded.rssKb, hwmKb: loaded.hwmKb },
      claude: { count: claude.count, rssKb: claude.rssKb, hwmKb: claude.hwmKb },
      closeMs: stop.ms,
      exit: stop.code ?? stop.signal,
    };
  } finally {
    for (const { watch } of list) await watch.stop();
    await daemon.stop();
  }
}
