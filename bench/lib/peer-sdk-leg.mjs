/**
 * The peers scenario's Agent SDK leg, run in its own host process: `query()` with streaming input
 * (two turns on one process), `interrupt()`, then a new session through `startup()` and through
 * `prewarm()` + `claim()`, all on the bench's claude binary (pathToClaudeCodeExecutable) with the
 * raw loop's environment.
 */
import { randomUUID } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { prewarm, query, startup } from '@anthropic-ai/claude-agent-sdk';
import {
  cpuMs,
  isTextDeltaFrame,
  measureInterrupts,
  measureShortTurns,
  measureSteadyTurns,
  peerTurnTimer,
} from './peer-turn-timer.mjs';
import { childrenOf, commandLine } from './proc.mjs';
import { OwnParts } from './stdio-timestamps.mjs';
import { spareSettledMs, waitForIdleSpare } from './warm-pool.mjs';

/**
 * Streaming input: user messages pushed one at a time; end() closes stdin. `record` sees each message
 * before it is queued (a host keeping a log of its own).
 */
export function inputQueue(record) {
  const waiting = [];
  let wake;
  let ended = false;
  return {
    push(text) {
      const message = {
        type: 'user',
        message: { role: 'user', content: text },
        parent_tool_use_id: null,
        session_id: '',
      };
      record?.(message);
      waiting.push(message);
      wake?.();
    },
    end() {
      ended = true;
      wake?.();
    },
    async *[Symbol.asyncIterator]() {
      for (;;) {
        if (waiting.length > 0) yield waiting.shift();
        else if (ended) return;
        else await new Promise((resolve) => (wake = resolve));
      }
    },
  };
}

/** Reads a Query's messages into a turn timer (each seen by `record` first); resolves when the Query ends. */
export function consume(q, record) {
  const timer = peerTurnTimer();
  const done = (async () => {
    for await (const message of q) {
      record?.(message);
      if (message.type === 'stream_event') {
        if (isTextDeltaFrame(message)) timer.delta();
      } else if (message.type === 'result') timer.result(message.is_error ? message : null);
    }
  })();
  done.then(
    () => timer.fail(new Error('the SDK query ended during the leg')),
    (error) => timer.fail(error),
  );
  return { timer, done: done.catch(() => {}) };
}

/** A new query() with streaming input and its first prompt sent: the Query, and that turn timed from the call. */
export function startQuery(options, prompt, record) {
  const input = inputQueue(record);
  const start = performance.now();
  const q = query({ prompt: input, options });
  const { timer, done } = consume(q, record);
  const first = timer.turn(start);
  input.push(prompt);
  return { q, input, timer, done, first };
}

export async function endQuery(q, input, done) {
  input.end();
  const kill = setTimeout(() => q.close(), 5_000);
  await done;
  clearTimeout(kill);
}

/** query()'s options for the leg: the bench's claude binary with the raw loop's environment. */
export function sdkOptions({ claudePath, rawEnv, workspace }) {
  return {
    pathToClaudeCodeExecutable: claudePath,
    env: rawEnv,
    cwd: workspace,
    includePartialMessages: true,
    // Claude Code's own system prompt, as the raw loop, Tether and the ACP adapter have it (the
    // SDK's default is an empty one: a smaller request than the other legs make).
    systemPrompt: { type: 'preset', preset: 'claude_code' },
    stderr: () => {},
  };
}

export async function runSdkPeerLeg(context) {
  const { prompt, short, slow } = context;
  const options = sdkOptions(context);
  const result = {};
  // (a) cold: query() + the prompt → first delta, → result; (d) RSS after it; (b, c) a warm turn.
  const { q, input, timer, done, first } = startQuery(options, prompt);
  result.cold = await first;
  result.rssAfterOneTurnKb = process.memoryUsage().rss / 1024;
  // The SDK's own launch line (its flags, not the raw loop's), for the report.
  const child = childrenOf(process.pid).find((candidate) => candidate.pid !== context.apiPid);
  result.argv = child ? commandLine(child.pid)?.slice(1) : undefined;
  const cpu = process.cpuUsage();
  const warm = timer.turn(performance.now());
  input.push(prompt);
  result.warm = { ...(await warm), cpuMs: cpuMs(process.cpuUsage(cpu)) };
  result.steady = await measureSteadyTurns(() => {
    const turn = timer.turn(performance.now());
    input.push(prompt);
    return turn;
  });
  Object.assign(result, await measureSdkShortTurnsAndStops({ q, input, timer }, { short, slow }));
  await endQuery(q, input, done);
  result.secondCold = await measureSdkSecondSession(options, prompt);
  return { ...result, ...(await measureSdkPrewarmed(context, options)) };
}

/**
 * (h) the warm short turns, then (f) interrupt() right after the first delta of a slow turn → its
 * result: the first stop, then the next ones, each after a short turn.
 */
export async function measureSdkShortTurnsAndStops({ q, input, timer }, { short, slow }) {
  const shortTurn = () => {
    const turn = timer.turn(performance.now());
    input.push(short);
    return turn;
  };
  const ownParts = new OwnParts();
  const warmShort = await measureShortTurns(shortTurn, ownParts);
  const stops = await measureInterrupts(
    (beforeStop) => sdkStop({ q, input, timer }, slow, beforeStop),
    shortTurn,
    ownParts,
  );
  return { warmShort, ...stops, ownParts: ownParts.medians() };
}

/**
 * A slow turn stopped by interrupt() at its first delta: when the stop was asked (`beforeStop` runs
 * right before) and when its result was read.
 */
async function sdkStop({ q, input, timer }, slow, beforeStop = () => {}) {
  let startedAt;
  const interrupted = timer.turn(performance.now(), {
    onFirstDelta: () => {
      beforeStop();
      startedAt = performance.now();
      q.interrupt().catch(() => {});
    },
    allowError: true,
  });
  input.push(slow);
  const { endedAt } = await interrupted;
  return { startedAt, endedAt };
}

/** (g) the host's second session: a new query() (its first one ended), its claude cold, in the same folder. */
async function measureSdkSecondSession(options, prompt) {
  const { q, input, done, first } = startQuery(options, prompt);
  const second = await first;
  await endQuery(q, input, done);
  return second;
}

/** (e) a new session through startup() and through prewarm() + claim(), each in a folder never seen before. */
export async function measureSdkPrewarmed(context, options) {
  const { short } = context;
  const result = {};
  // (e) startup(): the process started and initialized for a known folder, then the first query.
  const startupFolder = `${context.root}/fresh-sdk-startup-${randomUUID()}`;
  await mkdir(startupFolder, { recursive: true });
  const warmQuery = await startup({ options: { ...options, cwd: startupFolder } });
  await waitForIdleSpare({ apiPid: context.apiPid, idleMs: spareSettledMs });
  const startupInput = inputQueue();
  const startupStart = performance.now();
  const startupQuery = warmQuery.query(startupInput);
  const startupRead = consume(startupQuery);
  const startupTurn = startupRead.timer.turn(startupStart);
  startupInput.push(short);
  result.startup = await startupTurn;
  await endQuery(startupQuery, startupInput, startupRead.done);

  // (e) prewarm(): a parked spare (no folder yet), claimed for a folder never seen before.
  const parking = `${context.root}/parking-sdk-${randomUUID()}`;
  const claimFolder = `${context.root}/fresh-sdk-claim-${randomUUID()}`;
  await Promise.all([mkdir(parking, { recursive: true }), mkdir(claimFolder, { recursive: true })]);
  const spare = await prewarm({ options: { ...options, cwd: parking } });
  await waitForIdleSpare({ apiPid: context.apiPid, idleMs: spareSettledMs });
  const claimInput = inputQueue();
  const claimStart = performance.now();
  const claimQuery = spare.claim({ prompt: claimInput, options: { cwd: claimFolder } });
  const claimRead = consume(claimQuery);
  const claimTurn = claimRead.timer.turn(claimStart);
  claimInput.push(short);
  const claimed = spare.claimed.then(
    () => 'claimed',
    (error) => `refused: ${error.message}`,
  );
  result.prewarmed = await claimTurn;
  result.claim = await claimed;
  await endQuery(claimQuery, claimInput, claimRead.done);
  return result;
}
