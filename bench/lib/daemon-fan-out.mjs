/**
 * Fan-out: one session in a fresh daemon, M subscribers, and for every (event × subscriber) the
 * time from the daemon's publish to the receipt here; a variant per kind and count of subscriber.
 */
import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { createTetherClient } from '@tether/client';
import { claudeUnder } from './claude-processes.mjs';
import { memoryOf } from './proc.mjs';
import { startDaemonProcess } from './daemon-process.mjs';
import { ClientSubscriber, RawSubscriber } from './fan-out-subscribers.mjs';
import { fanoutTurn, percentiles } from './fan-out-turn.mjs';
import { clockOffset } from './monotonic-clock.mjs';
import { SHORT, turnPrompt } from './scripted-prompts.mjs';
import { summarize } from './stats.mjs';
import { EventWatch } from './tether-harness.mjs';

async function fanoutVariant({ daemon, client, sessionId, kind, count, turns, deltas, delayMs = 0, offsetMs, log }) {
  const { lastSeq } = await client.getSession(sessionId);
  const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
  // From one before the last event: each subscriber replays it, which shows its stream is open.
  const afterSeq = Math.max(0, lastSeq - 1);
  const subscribers = Array.from({ length: count }, () =>
    kind === 'raw'
      ? new RawSubscriber({ url: daemon.url, token: daemon.token, sessionId, afterSeq, agent })
      : new ClientSubscriber({ client, sessionId, afterSeq }),
  );
  try {
    await Promise.all(
      subscribers.map((subscriber) => subscriber.waitUntil(() => subscriber.lastSeq >= lastSeq, 30_000)),
    );
    const subscriberGauge = await readSubscriberGauge(daemon);
    await sleep(100);
    const connected = memoryOf(daemon.pid);
    const results = [];
    for (let turn = 0; turn < turns; turn += 1) {
      const result = await fanoutTurn({
        daemon,
        client,
        sessionId,
        subscribers,
        prompt: turnPrompt(deltas, delayMs),
        offsetMs,
      });
      results.push(result);
      const latency = percentiles(result.latencies);
      log?.(
        `bench: daemon fan-out ${kind} x${count}${delayMs ? ` paced ${delayMs} ms` : ''} turn ${turn + 1}: ${result.emittedDeltas} deltas in ${result.deltaEvents} delta events, ${result.events} events, ${result.deliveries} deliveries (${result.missing} missing) in ${result.turnMs.toFixed(0)} ms; ` +
          `publish → receipt p50 ${latency.p50.toFixed(2)} p99 ${latency.p99.toFixed(2)} max ${latency.max.toFixed(1)} ms; CPU daemon ${result.cpu.daemonMs.toFixed(0)} bench ${result.cpu.benchMs.toFixed(0)} claude ${result.cpu.claudeMs.toFixed(0)} ms`,
      );
    }
    await sleep(100);
    const memory = memoryOf(daemon.pid);
    const heap = await daemon.request({ type: 'memory' });
    const collected = await daemon.request({ type: 'memory', gc: true });
    await sleep(100);
    const afterGc = memoryOf(daemon.pid);
    const all = (pick) => results.flatMap(pick);
    return {
      kind,
      subscribers: count,
      delayMs,
      turns,
      subscriberGauge,
      publishToReceipt: percentiles(all((result) => result.latencies)),
      publishToFirstReceipt: percentiles(all((result) => result.firstLatencies)),
      spread: percentiles(all((result) => result.spreads)),
      emitToPublish: percentiles(all((result) => result.commitWaits)),
      emitToReceipt: percentiles(all((result) => result.emitToReceipt)),
      turnMs: summarize(results.map((result) => result.turnMs)),
      events: results.map((result) => result.events),
      deltas: results.map((result) => result.emittedDeltas),
      deltaEvents: results.map((result) => result.deltaEvents),
      deliveries: results.reduce((sum, result) => sum + result.deliveries, 0),
      missing: results.reduce((sum, result) => sum + result.missing, 0),
      overflows: subscribers.reduce((sum, subscriber) => sum + subscriber.overflows, 0),
      errors: subscribers.filter((subscriber) => subscriber.error).length,
      cpu: {
        daemonMs: summarize(results.map((result) => result.cpu.daemonMs)).median,
        benchMs: summarize(results.map((result) => result.cpu.benchMs)).median,
        claudeMs: summarize(results.map((result) => result.cpu.claudeMs)).median,
      },
      daemonRssKb: memory.rssKb,
      daemonHwmKb: memory.hwmKb,
      // Subscribers connected, before the turns; after the turns (no GC) with the heap; after a full GC.
      daemonConnectedRssKb: connected.rssKb,
      daemonHeapUsedBytes: heap.heapUsed,
      daemonHeapTotalBytes: heap.heapTotal,
      daemonExternalBytes: heap.external,
      daemonArrayBuffersBytes: heap.arrayBuffers,
      daemonAfterGcRssKb: afterGc.rssKb,
      daemonAfterGcHeapUsedBytes: collected.heapUsed,
    };
  } finally {
    for (const subscriber of subscribers) subscriber.stop();
    agent.destroy();
    await Promise.all(subscribers.map((subscriber) => subscriber.done).filter(Boolean));
    await sleep(200);
  }
}

/** tether_subscribers from GET /v1/metrics (what the daemon itself counts). */
async function readSubscriberGauge(daemon) {
  try {
    const response = await fetch(`${daemon.url}/v1/metrics`, { headers: { authorization: `Bearer ${daemon.token}` } });
    const text = await response.text();
    const match = /^tether_subscribers(?:\{[^}]*\})?\s+(\d+)/m.exec(text);
    return match ? Number(match[1]) : null;
  } catch {
    return null;
  }
}

export async function measureFanout(
  context,
  { sessions, subscribers, fanoutDeltas, fanoutTurns, pacedMs, pacedTurns, repoRoot, log },
) {
  const daemon = await startDaemonProcess({
    repoRoot,
    claudePath: context.claudePath,
    environment: context.environment,
    maxProcesses: sessions,
    stamps: true,
  });
  let watch;
  try {
    const client = createTetherClient({ url: daemon.url, token: daemon.token });
    const clock = await clockOffset(daemon);
    log?.(
      `bench: daemon fan-out: daemon pid ${daemon.pid}; clock offset daemon - bench ${clock.offsetMs.toFixed(3)} ms (IPC round trip ${clock.rttMs.toFixed(3)} ms)`,
    );
    const { sessionId } = await client.openSession({ workspace: { kind: 'directory', path: context.workspace } });
    await daemon.request({ type: 'watch', sessionId });
    // A short turn first (not measured): the CLI is started and warm before the fan-out turns.
    watch = new EventWatch(client, sessionId);
    const mark = watch.mark();
    const { runId } = await client.submitTurn({ sessionId, input: [{ type: 'text', text: SHORT }] });
    await watch.waitFor((event) => event.type === 'run.completed' && event.runId === runId, mark, 60_000);
    await watch.stop();
    watch = undefined;
    const idle = memoryOf(daemon.pid);
    // Both processes read the same CLOCK_MONOTONIC, so no correction is applied (offset 0); the IPC
    // ping-pong above and again at the end shows the offset is 0 to within its round trip.
    const offsetMs = 0;
    const variants = [];
    // One measured variant after another, on the same daemon, session and clock.
    const variant = (kind, count, turns, extra = {}) =>
      fanoutVariant({ daemon, client, sessionId, kind, count, turns, deltas: fanoutDeltas, offsetMs, log, ...extra });
    variants.push(await variant('raw', 1, fanoutTurns));
    variants.push(await variant('raw', subscribers, fanoutTurns));
    variants.push(await variant('client', subscribers, fanoutTurns));
    // The same turn paced like a model (pacedMs between the API's SSE events): latency per event when the fan-out is not saturated.
    if (pacedMs > 0 && pacedTurns > 0) {
      variants.push(await variant('raw', subscribers, pacedTurns, { delayMs: pacedMs }));
      variants.push(await variant('client', subscribers, pacedTurns, { delayMs: pacedMs }));
    }
    const clockAfter = await clockOffset(daemon);
    const claude = claudeUnder(daemon.pid);
    const stop = await daemon.stop();
    return {
      clock,
      clockAfter,
      daemonIdleRssKb: idle.rssKb,
      variants,
      claude: { count: claude.count, rssKb: claude.rssKb },
      closeMs: stop.ms,
      exit: stop.code ?? stop.signal,
    };
  } finally {
    await watch?.stop();
    await daemon.stop();
  }
}
