import {
  type ProtocolEvent,
  type RunOutcome,
  type SerializedAgentError,
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
}

/**
 * Submits one turn and feeds every event of the session from `afterSeq` to the sink until the
 * run completes; the summary comes from the events themselves. Subscribing before submitting
 * means nothing is missed.
 */
export async function runTurn(
  runtime: TetherBackend,
  options: { sessionId: string; prompt: string; attachments?: TurnAttachments; afterSeq: number; sink: EventSink },
): Promise<TurnSummary> {
  const controller = new AbortController();
  const events = runtime.subscribe(options.sessionId, { afterSeq: options.afterSeq, signal: controller.signal });
  let usage: TokenUsage | null = null;
  try {
    // Inside the try: a refused turn (a bad image) ends the subscription too.
    const { runId } = await runtime.submitTurn({
      sessionId: options.sessionId,
      input: turnInput(options.prompt, options.attachments),
    });
    for await (const event of events) {
      options.sink.event(event);
      if (event.type === 'run.usage' && event.runId === runId) {
        const { type: _type, runId: _runId, sessionId: _sessionId, seq: _seq, at: _at, ...tokens } = event;
        usage = usage ? addUsage(usage, tokens) : tokens;
      }
      if (event.type === 'run.completed' && event.runId === runId) {
        return { runId, outcome: event.outcome, error: event.error ?? null, usage };
      }
    }
  } finally {
    controller.abort();
  }
  throw new Error('The event stream ended before the run completed.');
}

export function exitCodeForRun(run: TurnSummary): number {
  if (run.outcome === 'succeeded') return 0;
  if (run.outcome === 'interrupted') return 130;
  return 1;
}
