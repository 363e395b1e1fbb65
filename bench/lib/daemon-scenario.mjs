/**
 * The daemon scenario: Tether served by `startDaemon` in its own process (bench/daemon-server.mjs)
 * against the same runtime in the bench process.
 *
 * 1. Turn time, concurrent sessions: N sessions (default 20) each run a cold turn (the CLI starts on
 *    the first turn) and then a warm 2nd turn, all N turns of a round submitted at once. Daemon leg:
 *    `@tether/client` (submitTurn over HTTP; one SSE subscription per session); per session
 *    submitTurn called → `run.completed` received by that subscription. In-process leg: a runtime
 *    over SQLite in the bench process, `runtime.submitTurn` → `run.completed` delivered to a
 *    `runtime.subscribe` consumer. Same provider settings (explicit environment, maxProcesses N),
 *    same fake API. Legs alternate per repetition; per leg p50/p99 over its N turns.
 * 2. Fan-out: one session in a fresh daemon with M subscribers (default 100), a turn of D deltas
 *    (default 500): for every (event × subscriber), receipt in the bench process minus the moment
 *    the daemon published the event, both on CLOCK_MONOTONIC (process.hrtime: one clock for every
 *    process of the host, ns resolution), publish stamped inside the daemon process and fetched
 *    over IPC after the turn. An IPC ping-pong checks that the two processes read the same clock.
 * 3. Memory: the daemon process's VmRSS / VmHWM, the claude processes' RSS summed separately.
 */
import http from 'node:http';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { createTetherClient } from '@tether/client';
import { descendantsOf, machineBusyMs, processCpuMs, processesWithEnvironment, rssKb, selfCpuMs, treeCpuMs } from './proc.mjs';
import { summarize, quantile } from './stats.mjs';
import { EventWatch, startTether } from './tether-harness.mjs';
import { readFileSync } from 'node:fs';

const hrMs = () => Number(process.hrtime.bigint()) / 1e6;

export const turnPrompt = (deltas, delayMs = 0) => `Reply with the scripted text. [bench:deltas=${deltas}${delayMs > 0 ? `,delay=${delayMs}` : ''}]`;
const SHORT = 'Reply briefly. [bench:short]';

/** VmRSS and VmHWM (KiB) of a live process; NaN when gone. */
function memoryOf(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    return { rssKb: Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? NaN), hwmKb: Number(/^VmHWM:\s+(\d+)/m.exec(status)?.[1] ?? NaN) };
  } catch {
    return { rssKb: NaN, hwmKb: NaN };
  }
}

/** Live claude processes under `rootPid` (every descendant: the daemon's or the bench's CLI children), RSS and peak RSS summed. */
function claudeUnder(rootPid, excluded = new Set()) {
  const processes = descendantsOf(rootPid).filter((child) => !excluded.has(child.pid));
  let rss = 0;
  let hwm = 0;
  for (const child of processes) {
    const memory = memoryOf(child.pid);
    rss += memory.rssKb || 0;
    hwm += memory.hwmKb || 0;
  }
  return { count: processes.length, rssKb: rss, hwmKb: hwm, pids: processes.map((child) => child.pid) };
}

/** CPU (ms) the given processes use from now to the call of the returned function. */
function cpuOf(pids) {
  const start = pids.map((pid) => processCpuMs(pid) || 0);
  return () => pids.reduce((sum, pid, index) => sum + ((processCpuMs(pid) || 0) - start[index]), 0);
}

/** Cores used by everything outside this process tree from now to end() (as the lifecycle scenarios do). */
function startMeter() {
  const busy = machineBusyMs();
  const own = treeCpuMs();
  const started = performance.now();
  return { end: () => (machineBusyMs() - busy - (treeCpuMs() - own)) / (performance.now() - started) };
}

// ---- the daemon process --------------------------------------------------------------------------

/** Starts bench/daemon-server.mjs; resolves once it printed {url, token, pid}. */
export async function startDaemonProcess({ repoRoot, claudePath, environment, maxProcesses, stamps = false }) {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'tether-bench-daemon-'));
  // BENCH_DAEMON_CPU_PROF=DIR: a V8 CPU profile of each daemon process, written to DIR when it exits (diagnosis only).
  const profile = process.env.BENCH_DAEMON_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(process.env.BENCH_DAEMON_CPU_PROF)}`] : [];
  const child = spawn(process.execPath, ['--expose-gc', ...profile, path.join(repoRoot, 'bench', 'daemon-server.mjs')], {
    cwd: repoRoot,
    env: { ...process.env, BENCH_DAEMON_CONFIG: JSON.stringify({ dataDir, claudePath, environment, maxProcesses, stamps }) },
    stdio: ['pipe', 'pipe', 'inherit', 'ipc'],
  });
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const pending = new Map();
  let nextId = 1;
  child.on('message', (message) => {
    const waiter = pending.get(message?.id);
    if (waiter) {
      pending.delete(message.id);
      waiter(message);
    }
  });
  const request = (message, timeoutMs = 10_000) =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(new Error(`daemon process: no answer to ${message.type} within ${timeoutMs} ms`));
      }, timeoutMs);
      pending.set(id, (answer) => {
        clearTimeout(timer);
        resolve(answer);
      });
      child.send({ ...message, id });
    });
  try {
    const info = await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the daemon process did not report its URL within 20 s')), 20_000);
      child.once('error', (error) => reject(new Error(`could not start the daemon process: ${error.message}`)));
      child.once('exit', (code) => reject(new Error(`the daemon process exited early (code ${code})`)));
      createInterface({ input: child.stdout }).once('line', (line) => {
        clearTimeout(timer);
        resolve(JSON.parse(line));
      });
    });
    let stopped = null;
    return {
      ...info,
      dataDir,
      request,
      /** Closes the daemon (stdin EOF → daemon.close() → exit); SIGKILL after 15 s. Resolves with the ms it took. */
      stop() {
        stopped ??= (async () => {
          const started = performance.now();
          child.stdin.end();
          const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
          const result = await exited;
          clearTimeout(timer);
          await rm(dataDir, { recursive: true, force: true });
          return { ms: performance.now() - started, ...result };
        })();
        return stopped;
      },
    };
  } catch (error) {
    child.kill('SIGKILL');
    await rm(dataDir, { recursive: true, force: true });
    throw error;
  }
}

/** Offset of the daemon process's hrtime clock against ours, from the IPC ping with the smallest round trip. */
async function clockOffset(daemon, pings = 20) {
  let best = { rttMs: Infinity, offsetMs: NaN };
  for (let index = 0; index < pings; index += 1) {
    const sent = hrMs();
    const answer = await daemon.request({ type: 'clock' });
    const received = hrMs();
    const rtt = received - sent;
    if (rtt < best.rttMs) best = { rttMs: rtt, offsetMs: answer.t - (sent + received) / 2 };
  }
  return best;
}

// ---- 1. turn time, concurrent sessions -------------------------------------------------------------

/** One round: every session's turn submitted at once; per session submit called → run.completed received. */
async function concurrentRound(sessions, submit, prompt) {
  const started = performance.now();
  const results = await Promise.all(
    sessions.map(async ({ sessionId, watch }) => {
      const mark = watch.mark();
      const start = performance.now();
      const { runId } = await submit({ sessionId, input: [{ type: 'text', text: prompt }] });
      const completed = await watch.waitFor((event) => event.type === 'run.completed' && event.runId === runId, mark, 180_000);
      if (completed.event.outcome !== 'succeeded') throw new Error(`daemon scenario: a run ended ${completed.event.outcome}: ${JSON.stringify(completed.event.error ?? null)}`);
      const deltas = watch.events.slice(mark).filter((entry) => entry.event.type === 'run.message_delta' && entry.event.runId === runId).length;
      return { turnMs: completed.at - start, deltas };
    }),
  );
  return { turnMs: results.map((result) => result.turnMs), deltas: results.map((result) => result.deltas), wallMs: performance.now() - started };
}

/** Event-loop delay of this process from now to stop() (2 ms sampling), in ms. */
function startLoopMonitor() {
  const histogram = monitorEventLoopDelay({ resolution: 2 });
  histogram.enable();
  return {
    stop() {
      histogram.disable();
      return { p50: histogram.percentile(50) / 1e6, p99: histogram.percentile(99) / 1e6, max: histogram.max / 1e6, mean: histogram.mean / 1e6 };
    },
  };
}

function roundStats(round) {
  return { p50: quantile(round.turnMs, 0.5), p99: quantile(round.turnMs, 0.99), max: Math.max(...round.turnMs), wallMs: round.wallMs };
}

async function inProcessLeg(context, { sessions, turnDeltas }) {
  const tether = await startTether({ claudePath: context.claudePath, environment: context.environment, provider: { maxProcesses: sessions } });
  const list = [];
  try {
    const rssBefore = rssKb();
    for (let index = 0; index < sessions; index += 1) {
      const { sessionId } = await tether.runtime.openSession({ workspace: { kind: 'directory', path: context.workspace } });
      const watch = new EventWatch(tether.runtime, sessionId);
      list.push({ sessionId, watch });
    }
    await Promise.all(list.map(({ watch }) => watch.waitFor(() => true, 0, 10_000)));
    const submit = (input) => tether.runtime.submitTurn(input);
    const cpuCold = selfCpuMs();
    const cold = await concurrentRound(list, submit, turnPrompt(turnDeltas));
    const apiTree = new Set([context.apiPid, ...descendantsOf(context.apiPid).map((child) => child.pid)]);
    const claudeCpu = cpuOf(claudeUnder(process.pid, apiTree).pids);
    const cpuWarm = selfCpuMs();
    const loop = startLoopMonitor();
    const warm = await concurrentRound(list, submit, turnPrompt(turnDeltas));
    const hostLoop = loop.stop();
    const hostCpu = { coldMs: cpuWarm - cpuCold, warmMs: selfCpuMs() - cpuWarm, warmClaudeMs: claudeCpu() };
    const claude = claudeUnder(process.pid, new Set([context.apiPid, ...descendantsOf(context.apiPid).map((child) => child.pid)]));
    return { cold, warm, hostCpu, loopDelay: { host: hostLoop }, benchRssDeltaKb: rssKb() - rssBefore, claude: { count: claude.count, rssKb: claude.rssKb, hwmKb: claude.hwmKb } };
  } finally {
    for (const { watch } of list) await watch.stop();
    await tether.dispose();
  }
}

async function daemonLeg(context, { sessions, turnDeltas, repoRoot }) {
  const daemon = await startDaemonProcess({ repoRoot, claudePath: context.claudePath, environment: context.environment, maxProcesses: sessions });
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

// ---- 2. fan-out ------------------------------------------------------------------------------------

/** What a fan-out subscriber keeps: when each seq arrived (hrtime ms), how many run.completed it saw, waiters. */
class Receipts {
  constructor(afterSeq) {
    this.times = [];
    this.lastSeq = afterSeq;
    this.completed = 0;
    this.overflows = 0;
    this.waiters = new Set();
    this.ended = false;
    this.error = undefined;
  }

  check() {
    for (const waiter of this.waiters) {
      if (waiter.predicate()) {
        this.waiters.delete(waiter);
        waiter.resolve();
      }
    }
  }

  waitUntil(predicate, timeoutMs = 60_000) {
    if (predicate()) return Promise.resolve();
    if (this.ended) return Promise.reject(this.error ?? new Error('the event stream ended'));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(waiter);
        reject(new Error(`fan-out subscriber: timed out at seq ${this.lastSeq}`));
      }, timeoutMs);
      const waiter = {
        predicate,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      };
      this.waiters.add(waiter);
    });
  }

  end() {
    if (this.ended) return;
    this.ended = true;
    for (const waiter of this.waiters) waiter.reject(this.error ?? new Error('the event stream ended'));
    this.waiters.clear();
  }
}

/**
 * A raw SSE reader (node:http, no validation): records when the chunk holding each frame arrived
 * (hrtime), reading only the frame's `id:` line and whether it is a run.completed. About the least
 * a subscriber can do, so the figures are the daemon's, not the reader's.
 */
class RawSubscriber extends Receipts {
  constructor({ url, token, sessionId, afterSeq, agent }) {
    super(afterSeq);
    this.buffer = '';
    this.stopping = false;
    this.request = http.get(`${url}/v1/sessions/${encodeURIComponent(sessionId)}/events?after=${afterSeq}`, { agent, headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' } });
    this.request.on('response', (response) => {
      if (response.statusCode !== 200) {
        this.error = new Error(`SSE answered ${response.statusCode}`);
        response.resume();
        this.end();
        return;
      }
      response.setEncoding('utf8');
      response.on('data', (text) => this.onData(text));
      response.on('end', () => this.end());
      response.on('error', () => this.end());
    });
    this.request.on('error', (error) => {
      if (!this.stopping) this.error = error;
      this.end();
    });
  }

  onData(text) {
    const at = hrMs();
    this.buffer += text;
    let start = 0;
    for (let stop = this.buffer.indexOf('\n\n', start); stop !== -1; stop = this.buffer.indexOf('\n\n', start)) {
      const frame = this.buffer.slice(start, stop);
      start = stop + 2;
      if (frame.startsWith('id: ')) {
        const seq = Number(frame.slice(4, frame.indexOf('\n')));
        this.times[seq] = at;
        this.lastSeq = seq;
        if (frame.includes('"type":"run.completed"')) this.completed += 1;
      } else if (frame.startsWith('event: overflow')) this.overflows += 1;
    }
    this.buffer = this.buffer.slice(start);
    this.check();
  }

  stop() {
    this.stopping = true;
    this.request.destroy();
    this.end();
  }
}

/** A subscriber through @tether/client (fetch, SSE parser, every event validated): when it yields each event. */
class ClientSubscriber extends Receipts {
  constructor({ client, sessionId, afterSeq }) {
    super(afterSeq);
    this.controller = new AbortController();
    this.done = (async () => {
      for await (const event of client.subscribe(sessionId, { afterSeq, signal: this.controller.signal })) {
        this.times[event.seq] = hrMs();
        this.lastSeq = event.seq;
        if (event.type === 'run.completed') this.completed += 1;
        this.check();
      }
    })()
      .catch((error) => {
        this.error = error;
      })
      .finally(() => this.end());
  }

  stop() {
    this.controller.abort();
  }
}

/** p50/p99/max of a Float64Array (sorted in place). */
function percentiles(values) {
  const sorted = Float64Array.from(values).sort();
  const at = (q) => {
    if (sorted.length === 0) return NaN;
    const position = (sorted.length - 1) * q;
    const low = Math.floor(position);
    const high = Math.ceil(position);
    return sorted[low] + (sorted[high] - sorted[low]) * (position - low);
  };
  return { n: sorted.length, p50: at(0.5), p90: at(0.9), p99: at(0.99), max: sorted.length ? sorted[sorted.length - 1] : NaN, min: sorted.length ? sorted[0] : NaN };
}

/** One fan-out turn: all subscribers connected; submit → every subscriber has the run.completed. */
async function fanoutTurn({ daemon, client, sessionId, subscribers, prompt, offsetMs }) {
  // Forget the stamps of earlier events (replays, the previous turn).
  await daemon.request({ type: 'stamps', sessionId });
  const before = subscribers.map((subscriber) => subscriber.completed);
  const cpuStart = { bench: selfCpuMs(), daemon: processCpuMs(daemon.pid), busy: machineBusyMs() };
  const claudePids = descendantsOf(daemon.pid).map((child) => child.pid);
  const claudeStart = claudePids.reduce((sum, pid) => sum + (processCpuMs(pid) || 0), 0);
  const start = performance.now();
  await client.submitTurn({ sessionId, input: [{ type: 'text', text: prompt }] });
  await Promise.all(subscribers.map((subscriber, index) => subscriber.waitUntil(() => subscriber.completed > before[index], 120_000)));
  const turnMs = performance.now() - start;
  const cpu = {
    benchMs: selfCpuMs() - cpuStart.bench,
    daemonMs: processCpuMs(daemon.pid) - cpuStart.daemon,
    claudeMs: claudePids.reduce((sum, pid) => sum + (processCpuMs(pid) || 0), 0) - claudeStart,
  };
  // The daemon's stamps, converted to our clock (offset ~0: the same CLOCK_MONOTONIC).
  const { published, emitted } = await daemon.request({ type: 'stamps', sessionId });
  if (published.length === 0) throw new Error('daemon scenario: no publish stamps (the daemon process did not wrap the runtime\'s SubscriptionHub)');
  const latencies = [];
  const spreads = [];
  const firstLatencies = [];
  let missing = 0;
  const deltaSeqs = [];
  for (const [seq, type, at] of published) {
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
    if (type === 'run.message_delta') deltaSeqs.push([seq, publishedAt]);
  }
  // Provider emit → publish (the writer's coalescing + the SQLite commit), delta by delta in order.
  const emittedDeltas = emitted.filter(([type]) => type === 'run.message_delta');
  const commitWaits = [];
  const emitToReceipt = [];
  for (let index = 0; index < Math.min(emittedDeltas.length, deltaSeqs.length); index += 1) {
    const emittedAt = emittedDeltas[index][1] - offsetMs;
    const [seq, publishedAt] = deltaSeqs[index];
    commitWaits.push(publishedAt - emittedAt);
    for (const subscriber of subscribers) if (subscriber.times[seq] !== undefined) emitToReceipt.push(subscriber.times[seq] - emittedAt);
  }
  // Each subscriber's times are kept per seq; drop this turn's to bound memory.
  for (const subscriber of subscribers) subscriber.times = [];
  return {
    turnMs,
    events: published.length,
    deltas: deltaSeqs.length,
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

async function fanoutVariant({ daemon, client, sessionId, kind, count, turns, deltas, delayMs = 0, offsetMs, log }) {
  const { lastSeq } = await client.getSession(sessionId);
  const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
  // From one before the last event: each subscriber replays it, which shows its stream is open.
  const afterSeq = Math.max(0, lastSeq - 1);
  const subscribers = Array.from({ length: count }, () =>
    kind === 'raw' ? new RawSubscriber({ url: daemon.url, token: daemon.token, sessionId, afterSeq, agent }) : new ClientSubscriber({ client, sessionId, afterSeq }),
  );
  try {
    await Promise.all(subscribers.map((subscriber) => subscriber.waitUntil(() => subscriber.lastSeq >= lastSeq, 30_000)));
    const subscriberGauge = await readSubscriberGauge(daemon);
    await sleep(100);
    const connected = memoryOf(daemon.pid);
    const results = [];
    for (let turn = 0; turn < turns; turn += 1) {
      const result = await fanoutTurn({ daemon, client, sessionId, subscribers, prompt: turnPrompt(deltas, delayMs), offsetMs });
      results.push(result);
      const latency = percentiles(result.latencies);
      log?.(
        `bench: daemon fan-out ${kind} x${count}${delayMs ? ` paced ${delayMs} ms` : ''} turn ${turn + 1}: ${result.deltas} deltas, ${result.events} events, ${result.deliveries} deliveries (${result.missing} missing) in ${result.turnMs.toFixed(0)} ms; ` +
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
      deltas: results.map((result) => result.deltas),
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

async function measureFanout(context, { sessions, subscribers, fanoutDeltas, fanoutTurns, pacedMs, pacedTurns, repoRoot, log }) {
  const daemon = await startDaemonProcess({ repoRoot, claudePath: context.claudePath, environment: context.environment, maxProcesses: sessions, stamps: true });
  let watch;
  try {
    const client = createTetherClient({ url: daemon.url, token: daemon.token });
    const clock = await clockOffset(daemon);
    log?.(`bench: daemon fan-out: daemon pid ${daemon.pid}; clock offset daemon - bench ${clock.offsetMs.toFixed(3)} ms (IPC round trip ${clock.rttMs.toFixed(3)} ms)`);
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
    variants.push(await fanoutVariant({ daemon, client, sessionId, kind: 'raw', count: 1, turns: fanoutTurns, deltas: fanoutDeltas, offsetMs, log }));
    variants.push(await fanoutVariant({ daemon, client, sessionId, kind: 'raw', count: subscribers, turns: fanoutTurns, deltas: fanoutDeltas, offsetMs, log }));
    variants.push(await fanoutVariant({ daemon, client, sessionId, kind: 'client', count: subscribers, turns: fanoutTurns, deltas: fanoutDeltas, offsetMs, log }));
    // The same turn paced like a model (pacedMs between the API's SSE events): latency per event when the fan-out is not saturated.
    if (pacedMs > 0 && pacedTurns > 0) {
      variants.push(await fanoutVariant({ daemon, client, sessionId, kind: 'raw', count: subscribers, turns: pacedTurns, deltas: fanoutDeltas, delayMs: pacedMs, offsetMs, log }));
      variants.push(await fanoutVariant({ daemon, client, sessionId, kind: 'client', count: subscribers, turns: pacedTurns, deltas: fanoutDeltas, delayMs: pacedMs, offsetMs, log }));
    }
    const clockAfter = await clockOffset(daemon);
    const claude = claudeUnder(daemon.pid);
    const stop = await daemon.stop();
    return { clock, clockAfter, daemonIdleRssKb: idle.rssKb, variants, claude: { count: claude.count, rssKb: claude.rssKb }, closeMs: stop.ms, exit: stop.code ?? stop.signal };
  } finally {
    await watch?.stop();
    await daemon.stop();
  }
}

// ---- the scenario ------------------------------------------------------------------------------------

/** Claude processes carrying the bench HOME (there must be none once a leg is closed); any left are killed by pid and reported. */
async function leftovers(home) {
  // A process may still be on its way out: give it up to 3 s.
  let found = processesWithEnvironment('HOME', home);
  for (let waited = 0; found.length > 0 && waited < 3_000; waited += 100) {
    await sleep(100);
    found = processesWithEnvironment('HOME', home);
  }
  for (const { pid } of found) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone meanwhile.
    }
  }
  return found.length;
}

export async function measureDaemon(context, { sessions, repetitions, turnDeltas, subscribers, fanoutDeltas, fanoutTurns, pacedMs = 10, pacedTurns = 1, gate, log, repoRoot }) {
  const home = context.environment.HOME;
  const pairs = [];
  const before = processesWithEnvironment('HOME', home).length;
  let leftoverProcesses = 0;
  for (let index = 0; index < repetitions; index += 1) {
    await gate.beforePair();
    const meter = startMeter();
    const order = index % 2 === 0 ? ['inProcess', 'daemon'] : ['daemon', 'inProcess'];
    const pair = { repetition: index + 1, order: order.join(',') };
    for (const leg of order) {
      pair[leg] = leg === 'daemon' ? await daemonLeg(context, { sessions, turnDeltas, repoRoot }) : await inProcessLeg(context, { sessions, turnDeltas });
      pair[leg].leftover = await leftovers(home);
      leftoverProcesses += pair[leg].leftover;
    }
    pair.otherLoadCores = meter.end();
    pair.quiet = pair.otherLoadCores < gate.quietCores;
    pairs.push(pair);
    const line = (leg) => {
      const cold = roundStats(pair[leg].cold);
      const warm = roundStats(pair[leg].warm);
      return `${leg} cold p50 ${cold.p50.toFixed(0)} p99 ${cold.p99.toFixed(0)} warm p50 ${warm.p50.toFixed(0)} p99 ${warm.p99.toFixed(0)} ms`;
    };
    log?.(
      `bench: daemon #${pair.repetition} ${pair.order.padEnd(18)} ${line('inProcess')}  ${line('daemon')}  daemon RSS ${(pair.daemon.daemon.rssKb / 1024).toFixed(1)} MiB, ` +
        `claude ${pair.daemon.claude.count} x ${(pair.daemon.claude.rssKb / 1024 / Math.max(1, pair.daemon.claude.count)).toFixed(0)} MiB; other load ${pair.otherLoadCores.toFixed(2)}`,
    );
  }
  const fanout = await measureFanout(context, { sessions, subscribers, fanoutDeltas, fanoutTurns, pacedMs, pacedTurns, repoRoot, log });
  const fanoutLeftover = await leftovers(home);
  leftoverProcesses += fanoutLeftover;
  return { sessions, repetitions, turnDeltas, pairs, fanout, liveWithHomeBefore: before, leftoverProcesses, fanoutLeftover, finalLiveWithHome: processesWithEnvironment('HOME', home).length };
}

export { roundStats };

/**
 * The figures: per turn kind (cold, warm), each leg's p50/p99 pooled over every repetition's turns,
 * and per repetition the ratios daemon/in-process of the round's p50 and of its p99 (their median
 * over repetitions, with the bootstrap CI when there are at least 3).
 */
export function summarizeDaemon(result, { bootstrapMedianInterval }) {
  const { pairs } = result;
  const ratioStats = (values) => {
    const interval = bootstrapMedianInterval(values);
    return { ...summarize(values), ci95: [interval.low, interval.high] };
  };
  const kind = (name) => {
    const pooled = (leg) => {
      const values = pairs.flatMap((pair) => pair[leg][name].turnMs);
      return { n: values.length, p50: quantile(values, 0.5), p99: quantile(values, 0.99), max: Math.max(...values) };
    };
    const per = (leg, q) => pairs.map((pair) => quantile(pair[leg][name].turnMs, q));
    const ratio = (q) => ratioStats(per('daemon', q).map((value, index) => value / per('inProcess', q)[index]));
    return {
      inProcess: pooled('inProcess'),
      daemon: pooled('daemon'),
      p50Ratio: ratio(0.5),
      p99Ratio: ratio(0.99),
      wallMs: { inProcess: summarize(pairs.map((pair) => pair.inProcess[name].wallMs)).median, daemon: summarize(pairs.map((pair) => pair.daemon[name].wallMs)).median },
      deltas: [...new Set(pairs.flatMap((pair) => [...pair.inProcess[name].deltas, ...pair.daemon[name].deltas]))],
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
