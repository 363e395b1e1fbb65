/** Which reply a `/v1/messages` request gets: queue, responder, automatic answers, default. */
import { errorReply, textReply } from './builders.js';
import type { FakeReply, FakeRequestView, FakeResponder, RecordedRequestKind } from './types.js';

/** Text of the reply used when nothing was scripted. */
export const UNSCRIPTED_TEXT = '(fake api: no scripted reply)';

/** The automatic answer to a compaction request (the CLI needs both tags). */
export const COMPACTION_TEXT =
  '<analysis>The fake API summarises the conversation without reading it.</analysis>\n' +
  '<summary>1. Primary Request and Intent: the user talked to a scripted fake API.\n2. Pending Tasks: none.</summary>';

export interface ReplySource {
  /** Removes and returns the next queued reply. */
  shiftQueued(): FakeReply | undefined;
  readonly responder: FakeResponder | undefined;
}

export interface ReplyChoice {
  reply: FakeReply;
  unscripted: boolean;
}

export function chooseReply(kind: RecordedRequestKind, view: FakeRequestView, source: ReplySource): ReplyChoice {
  if (kind === 'probe')
    return { reply: textReply('Hi', { usage: { inputTokens: 8, outputTokens: 1 } }), unscripted: false };
  if (kind === 'compaction') {
    const fromResponder = askResponder(source.responder, view);
    return { reply: fromResponder ?? textReply(COMPACTION_TEXT, { chunks: 4 }), unscripted: false };
  }
  const queued = source.shiftQueued();
  if (queued !== undefined) return { reply: queued, unscripted: false };
  const fromResponder = askResponder(source.responder, view);
  if (fromResponder !== undefined) return { reply: fromResponder, unscripted: false };
  return { reply: textReply(UNSCRIPTED_TEXT), unscripted: true };
}

function askResponder(responder: FakeResponder | undefined, view: FakeRequestView): FakeReply | undefined {
  if (responder === undefined) return undefined;
  try {
    return responder(view);
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    return errorReply(500, { message: `fake api: the responder threw: ${detail}` });
  }
}
