/** Interrupt latency: a slow turn stopped right after its first delta, raw loop against Tether. */
import { performance } from 'node:perf_hooks';
import { runPairs } from './paired-runs.mjs';
import { RawClaude, isResult, isTextDelta } from './raw-session.mjs';
import { SHORT, SLOW } from './scripted-prompts.mjs';
import { EventWatch, startTether, tetherTurn } from './tether-harness.mjs';

/** Raw: interrupt control request written right after the first delta → its control_response, → the result line. */
async function rawInterrupt(raw) {
  const mark = raw.mark();
  const start = performance.now();
  raw.sendUser(SLOW);
  const first = await raw.waitFor(isTextDelta, mark);
  const t0 = performance.now();
  const requestId = raw.interrupt();
  const ack = raw.waitFor(
    (frame) => frame.type === 'control_response' && frame.response?.request_id === requestId,
    mark,
  );
  ack.catch(() => {});
  const result = await raw.waitFor(isResult, mark);
  const acknowledged = await ack;
  const timeline = raw.frames
    .slice(mark)
    .filter((entry) => entry.at >= t0 && entry.at <= result.at)
    .map(
      (entry) =>
        `${entry.frame.type}${entry.frame.event?.type ? `/${entry.frame.event.type}` : ''}@${(entry.at - t0).toFixed(1)}`,
    )
    .join(' ');
  return {
    firstDeltaMs: first.at - start,
    ackMs: acknowledged.at - t0,
    completedMs: result.at - t0,
    resultSubtype: result.frame.subtype,
    timeline,
  };
}

/** Tether: interruptRun issued when the first run.message_delta is delivered → receipt, → run.completed delivered. */
async function tetherInterrupt(runtime, watch, sessionId, { commits, emits }) {
  const mark = watch.mark();
  const start = performance.now();
  const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: SLOW }] });
  const first = await watch.waitFor((event) => event.type === 'run.message_delta' && event.runId === runId, mark);
  const t0 = performance.now();
  const receipt = runtime.interruptRun({ sessionId, runId }).then((value) => ({ value, at: performance.now() }));
  receipt.catch(() => {});
  const completed = await watch.waitFor((event) => event.type === 'run.completed' && event.runId === runId, mark);
  const acknowledged = await receipt;
  if (completed.event.outcome !== 'interrupted')
    throw new Error(`tether: the interrupted run ended ${completed.event.outcome}`);
  const after = watch.events.slice(mark).filter((entry) => entry.at >= t0);
  const requested = after.find((entry) => entry.event.type === 'run.interrupt_requested');
  return {
    // What was delivered between the request and run.completed, and when (ms after the request).
    timeline: after.map((entry) => `${entry.event.type}@${(entry.at - t0).toFixed(1)}`).join(' '),
    // Store commits from the request to run.completed: when each started and what it held.
    commits: commits
      .filter((commit) => commit.at >= t0 && commit.at <= completed.at)
      .map(
        (commit) =>
          `[${commit.types.join(',') || `${commit.sessions}s/${commit.runs}r/${commit.receipts}rc`}]@${(commit.at - t0).toFixed(1)}-${((commit.settledAt ?? NaN) - t0).toFixed(1)}`,
      )
      .join(' '),
    // Parts the provider emitted from the request to run.completed (the CLI's lines, translated).
    emitted: emits
      .filter((emit) => emit.at >= t0 && emit.at <= completed.at)
      .map((emit) => `${emit.type}@${(emit.at - t0).toFixed(1)}`)
      .join(' '),
    providerCompletedMs:
      (emits.findLast((emit) => emit.type === 'run.completed' && emit.at >= t0 && emit.at <= completed.at)?.at ?? NaN) -
      t0,
    firstDeltaMs: first.at - start,
    ackMs: acknowledged.at - t0,
    completedMs: completed.at - t0,
    requestedEventMs: requested ? requested.at - t0 : NaN,
    receiptRunId: acknowledged.value.runId === runId,
  };
}

export async function measureInterrupts(context, { repetitions, gate, log }) {
  const raw = new RawClaude(context);
  const tether = await startTether({ ...context, recordCommits: true });
  let watch;
  try {
    const { sessionId } = await tether.runtime.openSession({
      workspace: { kind: 'directory', path: context.workspace },
    });
    watch = new EventWatch(tether.runtime, sessionId);
    // One ordinary turn each first: both processes are up and warm before the first stop.
    await raw.turn(SHORT);
    await tetherTurn(tether.runtime, watch, sessionId, SHORT);
    const pairs = await runPairs({
      legs: ['raw', 'tether'],
      repetitions,
      gate,
      label: 'interrupt',
      log,
      run: (leg) => (leg === 'raw' ? rawInterrupt(raw) : tetherInterrupt(tether.runtime, watch, sessionId, tether)),
    });
    return { pairs };
  } finally {
    await watch?.stop();
    await raw.dispose();
    await tether.dispose();
  }
}
