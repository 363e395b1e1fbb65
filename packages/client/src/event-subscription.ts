import { type AgentError, ProtocolEvent, type SubscribeOptions as SessionEventsOptions } from '@tether/protocol';
import {
  errorFromResponse,
  invalidResponseError,
  silentStreamError,
  streamEndedError,
  streamLostError,
  streamBrokenError,
  unreachableError,
} from './client-errors.js';
import type { DaemonConnection } from './daemon-connection.js';
import { type ReconnectSchedule, delayBeforeAttempt, retryAfterMsOf, waitUnlessAborted } from './reconnect-backoff.js';
import { SilenceWatch } from './silence-watch.js';
import { type SseFrame, SseParser } from './sse-parser.js';

/** The protocol's afterSeq and signal (which, here, also closes the stream), and the connection's state. */
export interface SubscribeOptions extends SessionEventsOptions {
  /**
   * Told when a stream opens ('open') and when one broke and the subscription is about to try
   * again ('reconnecting'), so a UI can say so while it waits; never for the final end.
   */
  readonly onConnectionChange?: (state: ConnectionState) => void;
}

/** Whether the subscription has a stream open now, or is between a break and the next one. */
export type ConnectionState = 'open' | 'reconnecting';

/** Why one connection ended, when it did not throw. */
interface ConnectionEnd {
  /** refused: the daemon ended the stream saying why (`event: error`, its store failed a read). */
  readonly reason: 'failed' | 'ended' | 'overflow' | 'gap' | 'silent' | 'refused';
  /** Whether the daemon accepted the subscription (200 event stream) before it ended. */
  readonly opened: boolean;
  /** Whether anything (an event, a ping) came on the stream before it ended. */
  readonly heard?: boolean;
  readonly error?: AgentError;
  /** The daemon's `Retry-After` on a 429 or 5xx (e.g. its streams are full): wait at least this long. */
  readonly retryAfterMs?: number;
}

/** Where the subscription stands: the seq of the last event it yielded. */
interface Position {
  lastSeq: number;
}

/**
 * subscribeToEvents for one iteration, whose return() ends a wait for the next event at once. An async
 * generator queues return() behind a next() still waiting: a caller's clean-up (a UI effect's) would
 * leave the stream open until another event came, on a quiet session never.
 */
export function endableSubscription(
  connection: DaemonConnection,
  sessionId: string,
  options: SubscribeOptions,
  schedule: ReconnectSchedule,
): AsyncIterableIterator<ProtocolEvent> {
  const stop = new AbortController();
  const signal = options.signal === undefined ? stop.signal : AbortSignal.any([options.signal, stop.signal]);
  const events = subscribeToEvents(connection, sessionId, { ...options, signal }, schedule);
  return {
    next: () => events.next(),
    return: () => {
      stop.abort();
      return events.return(undefined);
    },
    throw: (error: unknown) => {
      stop.abort();
      return events.throw(error);
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}

/**
 * A session's events, replayed then live, across as many connections as it takes: whenever a
 * stream breaks (network error, end, overflow, 5xx, a gap, nothing at all for the silence limit) it
 * reconnects with backoff from the last seq it yielded, and drops anything at or below it, so the
 * caller sees every seq once, in order.
 */
async function* subscribeToEvents(
  connection: DaemonConnection,
  sessionId: string,
  options: SubscribeOptions,
  schedule: ReconnectSchedule,
): AsyncGenerator<ProtocolEvent, void, undefined> {
  const signal = options.signal;
  const position: Position = { lastSeq: options.afterSeq ?? 0 };
  let failedAttempts = 0;
  let resuming = false;
  while (!signal?.aborted) {
    const end = yield* readConnection(connection, sessionId, position, resuming, signal, options.onConnectionChange, {
      silenceLimitMs: schedule.silenceLimitMs,
    });
    resuming = true;
    if (signal?.aborted) return;
    // A stream that opened and carried something resets the count, except after a gap, a silence or
    // the daemon's refusal: a daemon that keeps skipping events, answers and then hangs, or accepts
    // each stream and ends it at once (its store cannot read the session) must not keep the client
    // reconnecting forever.
    const counts = end.reason !== 'gap' && end.reason !== 'silent' && end.reason !== 'refused';
    const served = end.opened && end.heard === true && counts;
    failedAttempts = served ? 1 : failedAttempts + 1;
    // A stream that served and then ended (an overflow, a daemon restarting) is no failed attempt: the
    // next attempt is always made, even with maxAttempts 0 ("give up at the first attempt that fails").
    if (!served && failedAttempts > schedule.maxAttempts) {
      // The last failure itself (unreachable, a 503's own error) says more than a summary would.
      throw end.error ?? streamLostError(connection.url, schedule.maxAttempts);
    }
    options.onConnectionChange?.('reconnecting');
    // Overflow means the daemon was ahead of us, not down: come straight back. A daemon that said when
    // to come back (429 too_many_streams: Retry-After 5) is not asked again sooner, nor later than maxDelayMs.
    const delay =
      end.reason === 'overflow'
        ? 0
        : Math.max(delayBeforeAttempt(failedAttempts, schedule), Math.min(end.retryAfterMs ?? 0, schedule.maxDelayMs));
    await waitUnlessAborted(delay, signal);
  }
}

async function* readConnection(
  connection: DaemonConnection,
  sessionId: string,
  position: Position,
  resuming: boolean,
  signal: AbortSignal | undefined,
  onConnectionChange: ((state: ConnectionState) => void) | undefined,
  limits: { readonly silenceLimitMs: number },
): AsyncGenerator<ProtocolEvent, ConnectionEnd, undefined> {
  // Its own controller: aborting it on every way out (consumer break, gap, overflow, silence)
  // releases the socket; the caller's signal aborts it too.
  const controller = new AbortController();
  const abort = () => controller.abort();
  signal?.addEventListener('abort', abort, { once: true });
  // A hung daemon keeps the connection open and sends nothing: only the missing pings tell.
  const watch = new SilenceWatch(limits.silenceLimitMs, abort);
  const silentEnd = (opened: boolean): ConnectionEnd => ({
    reason: 'silent',
    opened,
    error: silentStreamError(connection.url, limits.silenceLimitMs),
  });
  try {
    const headers: Record<string, string> = {
      authorization: `Bearer ${connection.token}`,
      accept: 'text/event-stream',
    };
    if (resuming) headers['last-event-id'] = String(position.lastSeq);
    const url = `${connection.url}/v1/sessions/${encodeURIComponent(sessionId)}/events?after=${position.lastSeq}`;
    let response: Response;
    try {
      response = await watch.wait(connection.fetch(url, { headers, signal: controller.signal }));
    } catch (error) {
      if (watch.silent) return silentEnd(false);
      return { reason: 'failed', opened: false, error: unreachableError(connection.url, error) };
    }
    if (!response.ok) {
      const error = await watch.wait(errorFromResponse(response, connection.url));
      if (watch.silent) return silentEnd(false);
      // 5xx and 429 are the daemon's passing trouble; 401, 404 and the rest will not change by retrying.
      if (response.status >= 500 || response.status === 429)
        return { reason: 'failed', opened: false, error, retryAfterMs: retryAfterMsOf(response.headers) };
      throw error;
    }
    if (!(response.headers.get('content-type') ?? '').startsWith('text/event-stream') || response.body === null) {
      throw invalidResponseError(connection.url, 'an answer that is not an event stream');
    }
    onConnectionChange?.('open');
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    const parser = new SseParser();
    let heard = false;
    for (;;) {
      let chunk: Awaited<ReturnType<typeof reader.read>>;
      try {
        chunk = await watch.wait(reader.read());
      } catch (error) {
        if (watch.silent) return silentEnd(true);
        return { reason: 'failed', opened: true, heard, error: streamBrokenError(connection.url, error) };
      }
      if (chunk.done) return { reason: 'ended', opened: true, heard };
      if (chunk.value.byteLength > 0) heard = true;
      for (const frame of parser.push(decoder.decode(chunk.value, { stream: true }))) {
        if (frame.event === 'overflow') return { reason: 'overflow', opened: true, heard };
        if (frame.event === 'error')
          return { reason: 'refused', opened: true, heard, error: streamEndedError(frame.data) };
        if (frame.event !== 'message') continue;
        const event = parseEvent(connection.url, sessionId, frame);
        if (event.seq <= position.lastSeq) continue;
        if (event.seq !== position.lastSeq + 1) return { reason: 'gap', opened: true, heard };
        // One chunk can carry many events: an abort while the caller held the last one ends it here.
        if (signal?.aborted) return { reason: 'ended', opened: true, heard };
        position.lastSeq = event.seq;
        yield event;
      }
    }
  } finally {
    watch.stop();
    signal?.removeEventListener('abort', abort);
    controller.abort();
  }
}

/**
 * An event that does not validate is thrown, not skipped: skipping would leave a gap, and
 * reconnecting would replay the same stored event forever. It means a daemon of another version.
 */
function parseEvent(url: string, sessionId: string, frame: SseFrame): ProtocolEvent {
  let value: unknown;
  try {
    value = JSON.parse(frame.data);
  } catch {
    throw invalidResponseError(url, 'an event that is not JSON');
  }
  const parsed = ProtocolEvent.safeParse(value);
  if (!parsed.success) throw invalidResponseError(url, 'an event that does not match the protocol', parsed.error);
  const event = parsed.data;
  if (event.sessionId !== sessionId) throw invalidResponseError(url, `an event of another session (seq ${event.seq})`);
  if (frame.id !== undefined && frame.id !== String(event.seq))
    throw invalidResponseError(url, `an event whose id is not its seq (${event.seq})`);
  return event;
}
