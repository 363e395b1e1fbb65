/** One fan-out turn and the latency figures drawn from it, pooled over every (event × subscriber). */
import { performance } from 'node:perf_hooks';
import { cpuOf } from './claude-processes.mjs';
import { descendantsOf, machineBusyMs, processCpuMs, selfCpuMs } from './proc.mjs';

/** p50/p99/max of a Float64Array (sorted in place). */
export function percentiles(values) {
  const sorted = Float64Array.from(values).sort();
  const at = (q) => {
    if (sorted.length === 0) return NaN;
    const position = (sorted.length - 1) * q;
    const low = Math.floor(position);
    const high = Math.ceil(position);
    return sorted[low] + (sorted[high] - sorted[low]) * (position - low);
  };
  return {
    n: sorted.length,
    p50: at(0.5),
    p90: at(0.9),
    p99: at(0.99),
    max: sorted.length ? sorted[sorted.length - 1] : NaN,
    min: sorted.length ? sorted[0] : NaN,
  };
}

/** One fan-out turn: all subscribers connected; submit → every subscriber has the run.completed. */
export async function fanoutTurn({ daemon, client, sessionId, subscribers, prompt, offsetMs }) {
  // Forget the stamps of earlier events (replays, the previous turn).
  await daemon.request({ type: 'stamps', sessionId });
  const before = subscribers.map((subscriber) => subscriber.completed);
  const cpuStart = { bench: selfCpuMs(), daemon: processCpuMs(daemon.pid), busy: machineBusyMs() };
  const claudeCpu = cpuOf(descendantsOf(daemon.pid).map((child) => child.pid));
  const start = performance.now();
  await client.submitTurn({ sessionId, input: [{ type: 'text', text: prompt }] });
  await Promise.all(
    subscribers.map((subscriber, index) => subscriber.waitUntil(() => subscriber.completed > before[index], 120_000)),
  );
  const turnMs = performance.now() - start;
  const cpu = {
    benchMs: selfCpuMs() - cpuStart.bench,
    daemonMs: processCpuMs(daemon.pid) - cpuStart.daemon,
    claudeMs: claudeCpu(),
  };
  // The daemon's stamps, converted to our clock (offset ~0: the same CLOCK_MONOTONIC).
  const { published, emitted } = await daemon.request({ type: 'stamps', sessionId });
  if (published.length === 0)
    throw new Error(
      "daemon scenario: no publish stamps (the daemon process did not wrap the runtime's SubscriptionHub)",
    );
  const latencies = [];
  const spreads = [];
  const firstLatencies = [];
  let missing = 0;
  const deltaSeqs = [];
  for (const [seq, type, at, textLength] of published) {
    const publishedAt = at - offsetMs;
    let first = Infinity;
    let last = -Infinity;
    for (const subscriber of subscribers) {
      const received = subscriber.times[seq];
      if (received === undefined) {
        missing += 1;
        continue;
      }
      latencies.push(received - publishedAt);
      first = Math.min(first, received);
      last = Math.max(last, received);
    }
    if (Number.isFinite(first)) {
      spreads.push(last - first);
      firstLatencies.push(first - publishedAt);
    }
    if (type === 'run.message_delta') deltaSeqs.push([seq, publishedAt, textLength]);
  }
  // Provider emit → publish (the writer's batching + the SQLite commit), per emitted delta. One
  // published event may carry several emitted deltas (a block's waiting deltas are joined), so an
  // emitted delta is paired with the event carrying the start of its text: the turn's deltas in
  // order, by text offset (only this turn's run is in flight, its text in seq order).
  const emittedDeltas = emitted.filter(([type]) => type === 'run.message_delta');
  const commitWaits = [];
  const emitToReceipt = [];
  let event = 0;
  let eventEnd = deltaSeqs[0]?.[2] ?? 0;
  let offset = 0;
  for (const [, at, length] of emittedDeltas) {
    while (event < deltaSeqs.length && offset >= eventEnd) {
      event += 1;
      eventEnd += deltaSeqs[event]?.[2] ?? 0;
    }
    offset += length;
    if (event >= deltaSeqs.length) break;
    const emittedAt = at - offsetMs;
    const [seq, publishedAt] = deltaSeqs[event];
    commitWaits.push(publishedAt - emittedAt);
    for (const subscriber of subscribers)
      if (subscriber.times[seq] !== undefined) emitToReceipt.push(subscriber.times[seq] - emittedAt);
  }
  const emittedChars = emittedDeltas.reduce((sum, [, , length]) => sum + length, 0);
  const publishedChars = deltaSeqs.reduce((sum, [, , length]) => sum + length, 0);
  if (emittedChars !== publishedChars)
    throw new Error(`daemon scenario: ${emittedChars} text characters emitted but ${publishedChars} published`);
  // Each subscriber's times are kept per seq; drop this turn's to bound memory.
  for (const subscriber of subscribers) subscriber.times = [];
  return {
    turnMs,
    events: published.length,
    deltaEvents: deltaSeqs.length,
    emittedDeltas: emittedDeltas.length,
    deliveries: latencies.length,
    missing,
    latencies,
    spreads,
    firstLatencies,
    commitWaits,
    emitToReceipt,
    cpu,
  };
}
