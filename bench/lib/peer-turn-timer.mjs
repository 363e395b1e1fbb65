/**
 * One turn at a time, timed from a start the caller gives: → first text delta, → the turn's end
 * (result). Shared by the peers scenario's raw and Agent SDK legs, which see the same CLI frames.
 */
import { performance } from 'node:perf_hooks';
import { median } from './stats.mjs';

export const isTextDeltaFrame = (frame) =>
  frame.event?.type === 'content_block_delta' && frame.event.delta?.type === 'text_delta';

/** CPU (ms) of a process.cpuUsage() difference. */
export const cpuMs = (usage) => (usage.user + usage.system) / 1000;

/** How many 2,000-delta turns follow the first warm one on the same process, for the steady figures. */
export const steadyTurns = 4;

/**
 * The steady warm turn: `steadyTurns` more turns on the same process, each timed and its CPU taken
 * (`cpuNow`: the driver's CPU so far, in ms), reported as medians. A fresh host's first warm turn
 * still runs much of its driver's code unoptimised (each leg's host is new), and one turn a round is
 * at the mercy of the machine's moment; a long-running host's turns look like these.
 */
export async function measureSteadyTurns(turn, cpuNow = () => cpuMs(process.cpuUsage())) {
  const turns = [];
  for (let index = 0; index < steadyTurns; index += 1) {
    const before = cpuNow();
    const { turnMs, deltas } = await turn();
    turns.push({ turnMs, deltas, cpuMs: cpuNow() - before });
  }
  return {
    turnMs: median(turns.map((entry) => entry.turnMs)),
    cpuMs: median(turns.map((entry) => entry.cpuMs)),
    deltas: turns[0].deltas,
    turns,
  };
}

/**
 * How many short turns a leg runs on its warm process, for the warm short turn's figure. On a slow
 * 2-core machine one leg's short turns spread from 29 to 111 ms in the raw loop alone; with nine a
 * leg the row's 95 % interval was ±10-15 % wide, larger than the difference it was to show (a host's
 * own ~0.3-2.5 ms between turns of ~40 ms, measured in the hosts on 2026-12-03). Twenty-five add
 * ~1 s a leg.
 */
export const shortTurns = 25;

/**
 * The warm short turn: `shortTurns` of them on the same process, one after another, reported as the
 * median of each figure. One ~30 ms turn a round moved by half of itself from one round to the next.
 * `turn` resolves with at least { turnMs, endedAt }. With `ownParts` (bench/lib/stdio-timestamps.mjs),
 * each turn is also timed around the CLI: the driver's own part before and after it.
 */
export async function measureShortTurns(turn, ownParts) {
  const turns = [];
  for (let index = 0; index < shortTurns; index += 1) {
    ownParts?.begin();
    const entry = await turn();
    ownParts?.add('turn', entry.endedAt - entry.turnMs, entry.endedAt);
    turns.push(entry);
  }
  return {
    firstDeltaMs: median(turns.map((entry) => entry.firstDeltaMs)),
    turnMs: median(turns.map((entry) => entry.turnMs)),
    turns: turns.map((entry) => entry.turnMs),
  };
}

/**
 * How many slow turns a leg stops after its first stop, one after another on its warm process, for the
 * interrupt's figure: nine, for the reason the short turns are twenty-five (a stop is ~7 ms, and a
 * host's own part of it ~0.2-1.3 ms).
 */
export const interruptStops = 9;

/**
 * The interrupt: slow turns, each stopped at its first delta. `stop(beforeStop)` calls `beforeStop`
 * right before it asks for the stop, and resolves with { startedAt, endedAt }: when the stop was asked,
 * when the turn's end was seen. The process's first stop is reported on its own: the CLI's first
 * interrupt takes it 15-25 ms more in every driver (its own code running for the first time), which
 * left a median of three stops the larger of the other two. Then `interruptStops` more, reported as
 * their median (one stop a round moved from 7 to 39 ms in the raw loop alone), and with `ownParts`
 * each timed around the CLI. Each stop after the first follows a short turn (`shortTurn`), as the
 * first follows the short turns: what a stopped turn still prints after its end (an ACP adapter's
 * last chunks carry no turn) goes to that turn, not to the next stop's first delta.
 */
export async function measureInterrupts(stop, shortTurn, ownParts) {
  const stops = [];
  for (let index = 0; index <= interruptStops; index += 1) {
    if (index > 0) await shortTurn();
    const timed = index > 0 ? ownParts : undefined;
    const { startedAt, endedAt } = await stop(() => timed?.begin());
    timed?.add('stop', startedAt, endedAt);
    stops.push(endedAt - startedAt);
  }
  return { firstInterruptMs: stops[0], interruptMs: median(stops.slice(1)), interrupts: stops };
}

export function peerTurnTimer() {
  let current;
  let failure;
  return {
    /** Resolves with { firstDeltaMs, turnMs, deltas, endedAt } at the turn's result (rejects on an error result). */
    turn(start, { onFirstDelta, allowError = false } = {}) {
      if (failure) return Promise.reject(failure);
      return new Promise((resolve, reject) => {
        current = { start, deltas: 0, firstAt: NaN, onFirstDelta, allowError, resolve, reject };
      });
    },
    delta() {
      if (!current) return;
      current.deltas += 1;
      if (current.deltas === 1) {
        current.firstAt = performance.now();
        current.onFirstDelta?.();
      }
    },
    result(errorFrame) {
      const turn = current;
      if (!turn) return;
      current = undefined;
      const endedAt = performance.now();
      if (errorFrame && !turn.allowError)
        turn.reject(new Error(`the turn ended with an error result: ${JSON.stringify(errorFrame).slice(0, 400)}`));
      else
        turn.resolve({
          firstDeltaMs: turn.firstAt - turn.start,
          turnMs: endedAt - turn.start,
          deltas: turn.deltas,
          endedAt,
        });
    },
    fail(error) {
      failure = error;
      current?.reject(error);
      current = undefined;
    },
  };
}
