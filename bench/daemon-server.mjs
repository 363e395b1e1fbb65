// The Tether daemon in its own process, for the daemon scenario (bench/lib/daemon-scenario.mjs):
// startDaemon from the built @tether/daemon (packages/daemon/dist) on 127.0.0.1, port 0, over a
// data dir, with one Claude provider configured with the bench's explicit environment.
// Configuration: BENCH_DAEMON_CONFIG = JSON {dataDir, claudePath, environment, maxProcesses, stamps, idleReleaseMs, agentNice}
// (idleReleaseMs: the provider's idle release, left at its default of 15 minutes when absent; agentNice:
// how much nicer than the daemon its agents run, the provider's default of 10 when absent).
// Prints one JSON line {"url","token","pid"} on stdout once listening; closes the daemon (and exits)
// when stdin closes or on SIGTERM.
//
// Side channel (IPC, only when `stamps` is on): the bench asks for the moments, on this process's
// CLOCK_MONOTONIC (process.hrtime, the same clock in every process of the host), at which
//   - the provider emitted each part of a watched session (its `emit` wrapped: a CLI line translated),
//   - the runtime published each event of that session: its SubscriptionHub's publish (the
//     runtime's fan-out to its live subscribers, called once per committed batch, right after the
//     commit) is wrapped in this process to stamp the batch before handing it on. A consumer of
//     runtime.subscribe would not do: with 100 other subscribers in the microtask queue it sees
//     the k-th event of a batch only after k rounds of theirs, i.e. late.
// Nothing else is recorded; with `stamps` off nothing is wrapped at all. On request it also reports
// process.memoryUsage(), after a full GC when asked (the bench starts it with --expose-gc).
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { startDaemon } from '@tether/daemon';
import { createClaudeProvider } from '@tether/provider-claude';
import { exitWithParent } from './lib/exit-with-parent.mjs';
import { observeEmits } from './lib/observe-emits.mjs';

const config = JSON.parse(process.env.BENCH_DAEMON_CONFIG ?? '{}');
const nowMs = () => Number(process.hrtime.bigint()) / 1e6;

const claude = createClaudeProvider({
  claudePath: config.claudePath,
  environment: config.environment,
  maxProcesses: config.maxProcesses ?? 20,
  ...(config.idleReleaseMs === undefined ? {} : { idleReleaseMs: config.idleReleaseMs }),
  ...(config.agentNice === undefined ? {} : { agentNice: config.agentNice }),
});
// A text delta's stamp also carries its text's length: one published event may carry several
// emitted deltas (a block's waiting deltas are joined), so the bench pairs them by text offset.
const textLength = (item) => (item.type === 'run.message_delta' ? item.text.length : 0);
/** sessionId → [[type, ms, text length]] of emitted parts, for watched sessions only. */
const emits = new Map();
const provider = config.stamps
  ? observeEmits(claude, (sessionId, part) => emits.get(sessionId)?.push([part.type, nowMs(), textLength(part)]))
  : claude;

/** sessionId → [[seq, type, ms, text length]] of published events, for watched sessions only. */
const published = new Map();
/**
 * Wraps the runtime's hub (`hub`, a TypeScript-private field: the packages load bundled, so the class
 * is not reachable as a module of its own) to stamp each batch before handing it on.
 */
function stampPublishes(runtime) {
  const hub = runtime.hub;
  if (typeof hub?.publish !== 'function')
    throw new Error("the daemon's runtime has no hub to stamp: bench/daemon-server.mjs needs updating");
  const publish = hub.publish.bind(hub);
  hub.publish = function stampedPublish(events) {
    if (published.size > 0) {
      const at = nowMs();
      for (const event of events) published.get(event.sessionId)?.push([event.seq, event.type, at, textLength(event)]);
    }
    return publish(events);
  };
}

const quiet = () => {};
const logger = {
  debug: quiet,
  info: quiet,
  warn: (fields, message) => process.stderr.write(`daemon warn: ${message ?? ''} ${JSON.stringify(fields)}\n`),
  error: (fields, message) => process.stderr.write(`daemon error: ${message ?? ''} ${JSON.stringify(fields)}\n`),
};

const daemon = await startDaemon({
  dataDir: config.dataDir,
  port: 0,
  providers: [provider],
  logger,
  shutdownGraceMs: 2_000,
});
if (config.stamps) stampPublishes(daemon.runtime);
process.stdout.write(`${JSON.stringify({ url: daemon.url, token: daemon.token, pid: process.pid })}\n`);

function watch(sessionId) {
  if (!published.has(sessionId)) published.set(sessionId, []);
  if (!emits.has(sessionId)) emits.set(sessionId, []);
}

let loopMonitor = null;
process.on('message', (message) => {
  if (!message || typeof message !== 'object') return;
  if (message.type === 'clock') {
    process.send?.({ type: 'clock', id: message.id, t: nowMs() });
  } else if (message.type === 'watch') {
    if (!config.stamps) {
      process.send?.({ type: 'error', id: message.id, message: 'started without stamps' });
      return;
    }
    watch(message.sessionId);
    process.send?.({ type: 'watching', id: message.id });
  } else if (message.type === 'loop-start') {
    // Event-loop delay of this process (perf_hooks histogram, 2 ms sampling) from now to loop-stop.
    loopMonitor?.disable();
    loopMonitor = monitorEventLoopDelay({ resolution: 2 });
    loopMonitor.enable();
    process.send?.({ type: 'loop', id: message.id });
  } else if (message.type === 'loop-stop') {
    loopMonitor?.disable();
    const h = loopMonitor;
    loopMonitor = null;
    process.send?.({
      type: 'loop',
      id: message.id,
      ...(h ? { p50: h.percentile(50) / 1e6, p99: h.percentile(99) / 1e6, max: h.max / 1e6, mean: h.mean / 1e6 } : {}),
    });
  } else if (message.type === 'memory') {
    // The bench starts this process with --expose-gc, so it can tell retained memory from garbage.
    if (message.gc && typeof globalThis.gc === 'function') {
      globalThis.gc();
      globalThis.gc();
    }
    process.send?.({
      type: 'memory',
      id: message.id,
      gc: Boolean(message.gc && globalThis.gc),
      ...process.memoryUsage(),
    });
  } else if (message.type === 'stamps') {
    // Hands over (and forgets) what was recorded so far for that session.
    process.send?.({
      type: 'stamps',
      id: message.id,
      published: published.get(message.sessionId)?.splice(0) ?? [],
      emitted: emits.get(message.sessionId)?.splice(0) ?? [],
    });
  }
});

exitWithParent(() => daemon.close());
