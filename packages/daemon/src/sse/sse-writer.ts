import { type ProtocolEvent, type SerializedAgentError, checkStartSeq, wholeNumberOf } from '@tether/protocol';
import type { OutboxFrame } from '../streaming/bounded-outbox.js';
import { eventJson } from '../streaming/serialized-event.js';

const encodedFrameOfEvent = new WeakMap<ProtocolEvent, OutboxFrame>();

/**
 * One event as an SSE frame: its seq as the id (what a reconnecting client sends back as
 * Last-Event-ID) and the event as one line of JSON, with no `event:` line. JSON.stringify escapes
 * CR and LF, so the data never spans lines.
 */
export function sseEventFrame(event: ProtocolEvent): OutboxFrame {
  // Encoded once per event and shared by every subscriber's outbox (see serialized-event.ts).
  let frame = encodedFrameOfEvent.get(event);
  if (frame === undefined) {
    frame = Buffer.from(`id: ${event.seq}\ndata: ${eventJson(event)}\n\n`);
    encodedFrameOfEvent.set(event, frame);
  }
  return frame;
}

/** The last frame for a subscriber cut off for falling behind: reconnect from `lastSeq`. */
export function sseOverflowFrame(lastSeq: number): OutboxFrame {
  return Buffer.from(`event: overflow\ndata: ${JSON.stringify({ lastSeq })}\n\n`);
}

/** The last frame of a stream the daemon could not go on with (its store failed a read): why. */
export function sseErrorFrame(error: SerializedAgentError): OutboxFrame {
  return Buffer.from(`event: error\ndata: ${JSON.stringify({ error })}\n\n`);
}

/** A comment line: keeps proxies and idle timeouts from closing a quiet stream. */
export const ssePingFrame: OutboxFrame = Buffer.from(': ping\n\n');

/** By the protocol's rule for where a read of a log starts (runtime.readEvents and follow keep the same). */
function parseSeq(value: string, where: string): number {
  return checkStartSeq(wholeNumberOf(value), where);
}

/**
 * Where a stream starts: Last-Event-ID when present (a reconnect), else ?after=SEQ, else 0. An ?after
 * given is checked either way, empty included: a mistake in it is told, not read as "from the start".
 */
export function streamStartSeq(lastEventId: string | undefined | null, after: string | undefined | null): number {
  const afterSeq = after !== undefined && after !== null ? parseSeq(after, 'after') : 0;
  if (lastEventId !== undefined && lastEventId !== null && lastEventId.trim() !== '')
    return parseSeq(lastEventId, 'Last-Event-ID');
  return afterSeq;
}
