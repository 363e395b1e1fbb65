import {
  AgentError,
  type InputCancelReason,
  type InputDelivery,
  type ProtocolEvent,
  type RunOutcome,
  type SerializedAgentError,
  type SubmitTurnReceipt,
  type TokenUsage,
  addUsage,
} from '@tether/protocol';
import { type TurnAttachments, turnInput } from './commands/attachment-options.js';
import type { TetherBackend } from './tether-backend.js';

export interface EventSink {
  event(event: ProtocolEvent): void;
}

export interface TurnSummary {
  readonly runId: string;
  readonly outcome: RunOutcome;
  readonly error: SerializedAgentError | null;
  readonly usage: TokenUsage | null;
  /** Set when the turn was a follow-up that ended without running (outcome then reads interrupted). */
  readonly inputCancelled: InputCancelReason | null;
}

/**
 * Whether the run's workspace comparison is over: its run.files_changed, or the warning that says
 * there will be none (docs/protocol.md, "Workspaces").
 */
function endsComparison(event: ProtocolEvent, runId: string): boolean {
  if (event.type === 'run.files_changed') return event.runId === runId;
  return (
    event.type === 'diagnostic' &&
    event.runId === runId &&
    (event.code === 'workspace.baseline_failed' || event.code === 'workspace.changes_unreadable')
  );
}

/**
 * Submits one turn and feeds every event of the session from `afterSeq` to the sink until the
 * run completes; the summary comes from the events themselves. Subscribing before submitting
 * means nothing is missed. In a workspace that compares runs (a git worktree), the files the run
 * changed are told after its run.completed: with `filesChanged`, the sink gets them too.
 */
export async function runTurn(
  runtime: TetherBackend,
  options: {
    sessionId: string;
    prompt: string;
    attachments?: TurnAttachments;
    afterSeq: number;
    sink: EventSink;
    /** Keep reading after run.completed until the run's run.files_changed (or the warning that replaces it). */
    filesChanged?: boolean;
    /** While a run is active: queue the turn as the next run (after_turn) or hand it into the running one (steer). */
    delivery?: InputDelivery;
    /** Told once the turn is recorded (a queued one carries its inputId). */
    onSubmitted?: (receipt: SubmitTurnReceipt) => void;
    /**
     * Settles when the run has ended, or rejects store_failure when its end cannot be stored (a full
     * disk): its run.completed then never comes, and the turn ends failed with that error instead.
     */
    runEnd?: (runId: string) => Promise<unknown>;
  },
): Promise<TurnSummary> {
  const controller = new AbortController();
  const events = runtime.subscribe(options.sessionId, { afterSeq: options.afterSeq, signal: controller.signal });
  let usage: TokenUsage | null = null;
  let completed: TurnSummary | null = null;
  // A baseline that failed is told before the run ends: then no comparison follows it.
  let comparing = options.filesChanged === true;
  let notStored: AgentError | null = null;
  try {
    // Inside the try: a refused turn (a bad image) ends the subscription too.
    const receipt = await runtime.submitTurn({
      sessionId: options.sessionId,
      input: turnInput(options.prompt, options.attachments),
      ...(options.delivery ? { delivery: options.delivery } : {}),
    });
    options.onSubmitted?.(receipt);
    const { runId, inputId } = receipt;
    options.runEnd?.(runId).catch((error: unknown) => {
      if (!(error instanceof AgentError) || error.code !== 'store_failure') return;
      notStored = error;
      controller.abort();
    });
    // A queued turn waits behind another run: that run's events are someone else's turn.
    const waitsItsTurn = receipt.queued === true && options.delivery === 'after_turn';
    for await (const event of events) {
      if (!waitsItsTurn || !('runId' in event) || event.runId === runId) options.sink.event(event);
      if (event.type === 'input.cancelled' && event.inputId === inputId)
        return { runId, outcome: 'interrupted', error: event.error ?? null, usage: null, inputCancelled: event.reason };
      if (event.type === 'run.usage' && event.runId === runId) usage = withRunUsage(usage, event);
      if (endsComparison(event, runId)) comparing = false;
      if (event.type === 'run.completed' && event.runId === runId)
        completed = { runId, outcome: event.outcome, error: event.error ?? null, usage, inputCancelled: null };
      if (completed !== null && !comparing) return completed;
    }
  } catch (error) {
    if (notStored === null) throw error;
  } finally {
    controller.abort();
  }
  // No run.completed can be stored to say it: the error is the command's, as a refusal is.
  if (completed === null && notStored !== null) throw notStored;
  // A runtime shutting down ends the stream; a completed run stands without its file list.
  if (completed !== null) return completed;
  throw new Error('The event stream ended before the run completed.');
}

/** A run's token usage so far with one more of its run.usage events added. */
export function withRunUsage(
  sofar: TokenUsage | null,
  event: Extract<ProtocolEvent, { type: 'run.usage' }>,
): TokenUsage {
  const { type: _type, runId: _runId, sessionId: _sessionId, seq: _seq, at: _at, ...tokens } = event;
  return sofar ? addUsage(sofar, tokens) : tokens;
}

export function exitCodeForRun(run: TurnSummary): number {
  // Refused (agent_refused, input_invalid: the cancellation carries why) is an error; withdrawn or stopped is not.
  if (run.inputCancelled !== null && run.error !== null) return 1;
  if (run.outcome === 'succeeded') return 0;
  // Stopped by its daemon's shutdown, not by this command's Ctrl-C: the turn did not get its answer.
  if (run.outcome === 'interrupted' && run.error?.code === 'runtime_stopped') return 1;
  if (run.outcome === 'interrupted') return 130;
  return 1;
}
