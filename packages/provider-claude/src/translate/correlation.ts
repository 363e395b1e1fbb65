import type { CliFrame, ResultFrame } from '../frames/cli-frame-schemas.js';
import type { ActiveTurn, TranslatorState } from './translator-state.js';

/**
 * How frames are attributed to the turn in flight.
 *
 * - `stamped` (default): every turn's input carries a fresh uuid and the producer echoes it
 *   (command_lifecycle, user_message_uuid(s) on init, status, the first stream event, the first
 *   assistant frame and the result). A turn's frames count from the first stamp naming its input;
 *   anything before that belongs to input Tether did not submit (e.g. a turn the CLI started itself
 *   for a finished background task) and is dropped with a debug diagnostic.
 * - `legacy-unstamped`: for a producer that never stamps (an older CLI or SDK behind an injected
 *   query). Frames belong to the one turn in flight by position. The declaration lapses the moment
 *   a stamp is seen: from then on the producer is known to stamp and `stamped` rules apply.
 */
export type Correlation = 'stamped' | 'legacy-unstamped';

interface Stamps {
  readonly uuids: readonly string[];
  /** Whether naming the input means its turn has begun (a lifecycle `queued` stamp does not). */
  readonly starts: boolean;
}

const none: Stamps = { uuids: [], starts: false };

function carried(uuids: readonly string[] | null | undefined, uuid: string | null | undefined): readonly string[] {
  if (uuids && uuids.length > 0) return uuids;
  return uuid ? [uuid] : none.uuids;
}

/** What a frame names, or `none` when it names nothing (most stream events: no object per delta then). */
function stamps(uuids: readonly string[], starts: boolean): Stamps {
  return uuids.length === 0 ? none : { uuids, starts };
}

/** The input uuids a frame names. */
export function stampsOf(frame: CliFrame): Stamps {
  switch (frame.kind) {
    case 'command_lifecycle':
      return { uuids: [frame.frame.command_uuid], starts: frame.frame.state === 'started' };
    case 'system':
      return stamps(carried(frame.frame.user_message_uuids, undefined), true);
    case 'stream_event':
    case 'assistant':
    case 'result':
      return stamps(carried(frame.frame.user_message_uuids, frame.frame.user_message_uuid), true);
    case 'conversation_reset':
      return stamps(carried(undefined, frame.frame.user_message_uuid), true);
    default:
      return none;
  }
}

/**
 * Reads a frame's stamps before it is translated: a stamp naming the turn's input marks the turn
 * started; any stamp at all ends a `legacy-unstamped` declaration. Returns whether it lapsed now.
 */
export function applyStamps(state: TranslatorState, stamps: Stamps): boolean {
  if (stamps.uuids.length === 0) return false;
  state.stampSeen = true;
  const turn = state.turn;
  if (turn && stamps.starts && stamps.uuids.includes(turn.uuid)) {
    turn.started = true;
    state.turnStartedOnProcess = true;
  }
  if (state.correlation !== 'legacy-unstamped') return false;
  state.correlation = 'stamped';
  return true;
}

/**
 * The CLI begins a turn by itself: an `init` that names no input, from a process known to stamp every
 * input of ours. It does so when a background task it ran finishes (its result's `origin` is a
 * `task-notification`), to answer the task's report, once the turn in flight has ended.
 */
export function beginsTurnOfItsOwn(state: TranslatorState, frame: CliFrame): boolean {
  // Asked of every frame: the frame's kind first, which rules out the streamed ones at once.
  return (
    frame.kind === 'system' &&
    frame.frame.subtype === 'init' &&
    state.correlation === 'stamped' &&
    state.stampSeen &&
    stampsOf(frame).uuids.length === 0
  );
}

/** The turn the CLI began by itself, as run `runId`: begun already, with no input of ours to name. */
export function turnOfItsOwn(runId: string): ActiveTurn {
  return { runId, uuid: '', started: true, interruptRequested: false, toolsRunning: 0, startedByAgent: true };
}

/** The run the frames now arriving belong to: the turn in flight, once it is known to have begun. */
export function attributedRunId(state: TranslatorState): string | null {
  const turn = state.turn;
  if (!turn) return null;
  return turn.started || state.correlation === 'legacy-unstamped' ? turn.runId : null;
}

/** A result the CLI writes when it could not start at all: it ends whatever the process was given. */
export function isStartupFailure(result: ResultFrame): boolean {
  return Boolean(result.startup_failure_reason) || (result.num_turns === 0 && result.is_error === true);
}

/**
 * Under `stamped`, whether a frame shows a producer that never stamps: a turn's init or result that
 * names no input, while our turn waits to begin, from a process that has never named any input of
 * ours. A stamping CLI names the input on the init and result of every turn it was sent; a turn it
 * starts by itself (a finished background task) only follows turns of ours on the same process,
 * which were stamped. Without this, every frame of such a producer is dropped and the run never ends.
 */
export function revealsUnstampedProducer(state: TranslatorState, frame: CliFrame): boolean {
  if (state.correlation !== 'stamped' || state.stampSeen || !state.turn || state.turn.started) return false;
  if (frame.kind === 'system') return frame.frame.subtype === 'init' && stampsOf(frame).uuids.length === 0;
  if (frame.kind === 'result') return stampsOf(frame).uuids.length === 0 && !isStartupFailure(frame.frame);
  return false;
}
