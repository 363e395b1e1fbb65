/** Crash detection: the session's claude SIGKILLed mid-turn, raw loop (the floor) against Tether. */
import { performance } from 'node:perf_hooks';
import { runPairs } from './paired-runs.mjs';
import { isAlive } from './proc.mjs';
import { watchDeath } from './process-stop-timing.mjs';
import { RawClaude, isTextDelta } from './raw-session.mjs';
import { SHORT, SLOW } from './scripted-prompts.mjs';
import { EventWatch, startTether, tetherTurn } from './tether-harness.mjs';

/** Raw reference: SIGKILL mid-turn → the 'exit' event, → 'close' (stdio ended): the floor for any host. */
async function rawCrash(context) {
  const raw = new RawClaude(context);
  try {
    const mark = raw.mark();
    raw.sendUser(SLOW);
    await raw.waitFor(isTextDelta, mark);
    const t0 = performance.now();
    raw.kill('SIGKILL');
    const death = watchDeath(raw.pid);
    const exit = await raw.exited;
    const closed = await raw.closed;
    return { exitMs: exit.at - t0, closedMs: closed.at - t0, diedMs: death.diedMs(t0) };
  } finally {
    await raw.dispose();
  }
}

/** Tether: SIGKILL the session's claude (pid from session.process_started) after the first delta → run.completed delivered. */
async function tetherCrash(runtime, watch, sessionId) {
  const mark = watch.mark();
  const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: SLOW }] });
  await watch.waitFor((event) => event.type === 'run.message_delta' && event.runId === runId, mark);
  // session.process_started is emitted at spawn, so it was delivered before the first delta.
  const pid = watch.latestPid();
  if (!pid || !isAlive(pid)) throw new Error(`tether: no live claude process to kill (pid ${pid})`);
  const t0 = performance.now();
  process.kill(pid, 'SIGKILL');
  const death = watchDeath(pid);
  const completed = await watch.waitFor(
    (event) => event.type === 'run.completed' && event.runId === runId,
    mark,
    30_000,
  );
  const stopped = await watch
    .waitFor((event) => event.type === 'session.process_stopped', mark, 5_000)
    .catch(() => null);
  return {
    completedMs: completed.at - t0,
    diedMs: death.diedMs(t0),
    processStoppedEventMs: stopped ? stopped.at - t0 : NaN,
    outcome: `${completed.event.outcome}${completed.event.error ? ` (${completed.event.error.code})` : ''}`,
    stoppedReason: stopped?.event.reason ?? null,
  };
}

export async function measureCrashes(context, { repetitions, gate, log }) {
  const tether = await startTether(context);
  let watch;
  try {
    const { sessionId } = await tether.runtime.openSession({
      workspace: { kind: 'directory', path: context.workspace },
    });
    watch = new EventWatch(tether.runtime, sessionId);
    // The conversation exists before the first kill, so every crashed turn is followed by a resume.
    await tetherTurn(tether.runtime, watch, sessionId, SHORT);
    const pairs = await runPairs({
      legs: ['raw', 'tether'],
      repetitions,
      gate,
      label: 'crash',
      log,
      run: (leg) => (leg === 'raw' ? rawCrash(context) : tetherCrash(tether.runtime, watch, sessionId)),
    });
    return { pairs };
  } finally {
    await watch?.stop();
    await tether.dispose();
  }
}
