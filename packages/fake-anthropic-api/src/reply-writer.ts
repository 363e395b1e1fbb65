/** Writes a chosen reply onto an HTTP response: SSE streams, JSON messages, errors, holds and drops. */
import type { ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { defaultErrorMessage, defaultErrorType, errorBody, statusForErrorType } from './error-body.js';
import {
  blockEvents,
  formatSse,
  messageEvents,
  messageJson,
  messageStartEvent,
  PING_EVENT,
  resolveMessage,
} from './message-events.js';
import type { SseEvent } from './message-events.js';
import type { FakeErrorReply, FakeReply } from './types.js';

export interface ReplyContext {
  res: ServerResponse;
  requestId: string;
  /** The requested model, echoed back. */
  model: string;
  streaming: boolean;
  /** Aborted when the client goes away or the server closes. */
  signal: AbortSignal;
  /** Registers a held response; the returned function unregisters it. */
  hold(release: () => void): () => void;
  /** Destroys the socket on purpose (not counted as a client abort). */
  destroy(): void;
  /** Aborted by `hurryPacedReplies()` or when the client goes away: ends every pause of the reply. */
  pacing: AbortSignal;
}

const DROP_TEXT = 'This reply is cut short by a dropped connection, on purpose.';
const MALFORMED_TEXT = 'This reply breaks off into a malformed event, on purpose.';

export async function writeReply(reply: FakeReply, ctx: ReplyContext): Promise<void> {
  switch (reply.kind) {
    case 'error':
      return writeError(ctx, reply);
    case 'hold':
      return writeHold(ctx);
    case 'drop_connection':
      return writeDrop(ctx, reply.afterDeltas ?? 0, reply.holdBeforeDrop === true);
    case 'stream_error': {
      const errorType = reply.errorType ?? 'overloaded_error';
      if (!ctx.streaming) return writeError(ctx, { kind: 'error', status: statusForErrorType(errorType), errorType });
      startSse(ctx);
      const message = resolveMessage({ content: [] }, ctx.model);
      if (!(await writeEvents(ctx, [messageStartEvent(message), PING_EVENT], 0))) return;
      const error = {
        type: 'error',
        error: { type: errorType, message: defaultErrorMessage(errorType) },
        request_id: ctx.requestId,
      };
      if (!(await writeEvents(ctx, [{ event: 'error', data: error }], 0))) return;
      ctx.res.end();
      return;
    }
    case 'malformed_stream':
      return writeMalformed(ctx, reply.variant);
    case undefined:
    case 'message': {
      const message = resolveMessage(reply, ctx.model);
      const delayMs = reply.delayMs ?? 0;
      if (!ctx.streaming) {
        if (delayMs > 0 && !(await pause(delayMs, ctx))) return;
        writeJson(ctx, 200, messageJson(message), reply.headers);
        return;
      }
      startSse(ctx, reply.headers);
      if (!(await writeEvents(ctx, messageEvents(message), delayMs))) return;
      ctx.res.end();
      return;
    }
  }
}

/** Answers with a JSON body (and the request-id header). */
export function writeJson(
  ctx: Pick<ReplyContext, 'res' | 'requestId'>,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (ctx.res.destroyed) return;
  ctx.res.writeHead(status, { ...headers, 'content-type': 'application/json', 'request-id': ctx.requestId });
  ctx.res.end(JSON.stringify(body));
}

function writeError(ctx: ReplyContext, reply: FakeErrorReply): void {
  const errorType = reply.errorType ?? defaultErrorType(reply.status);
  const headers: Record<string, string> = {
    ...reply.headers,
    'x-should-retry': reply.status >= 500 || reply.status === 429 || reply.status === 408 ? 'true' : 'false',
  };
  const retryAfter = reply.retryAfterSeconds ?? (reply.status === 429 ? 1 : undefined);
  if (retryAfter !== undefined) headers['retry-after'] = String(retryAfter);
  writeJson(
    ctx,
    reply.status,
    errorBody(errorType, reply.message ?? defaultErrorMessage(errorType), ctx.requestId),
    headers,
  );
}

async function writeHold(ctx: ReplyContext): Promise<void> {
  if (ctx.streaming) {
    startSse(ctx);
    const message = resolveMessage({ content: [] }, ctx.model);
    if (!(await writeEvents(ctx, [messageStartEvent(message), PING_EVENT], 0))) return;
  }
  await holdUntilReleased(ctx);
}

/** Keeps the response open (held) until `releaseHeld()` or `close()` destroys its socket, or the client goes away. */
async function holdUntilReleased(ctx: ReplyContext): Promise<void> {
  if (ctx.signal.aborted) return;
  const unregister = ctx.hold(() => ctx.destroy());
  await new Promise<void>((resolve) => {
    if (ctx.signal.aborted) return resolve();
    ctx.signal.addEventListener('abort', () => resolve(), { once: true });
  });
  unregister();
}

async function writeDrop(ctx: ReplyContext, afterDeltas: number, holdBeforeDrop: boolean): Promise<void> {
  if (!ctx.streaming) {
    ctx.destroy();
    return;
  }
  startSse(ctx);
  const message = resolveMessage({ content: [{ type: 'text', text: DROP_TEXT, chunks: afterDeltas + 2 }] }, ctx.model);
  const events: SseEvent[] = [messageStartEvent(message), PING_EVENT];
  let deltas = 0;
  for (const event of blockEvents(message.blocks[0]!, 0)) {
    if (event.event === 'content_block_delta') {
      if (deltas === afterDeltas) break;
      deltas++;
    }
    events.push(event);
  }
  if (!(await writeEvents(ctx, events, 0))) return;
  // Held, the drop waits for the test: it comes once the client has surely read the deltas.
  if (holdBeforeDrop) await holdUntilReleased(ctx);
  else ctx.destroy();
}

async function writeMalformed(ctx: ReplyContext, variant: 'cut_mid_event' | 'invalid_json'): Promise<void> {
  if (!ctx.streaming) {
    ctx.res.writeHead(200, { 'content-type': 'application/json', 'request-id': ctx.requestId });
    ctx.res.end('{"type":"message","content":[');
    return;
  }
  startSse(ctx);
  const message = resolveMessage({ content: [{ type: 'text', text: MALFORMED_TEXT, chunks: 3 }] }, ctx.model);
  const [start, first, second] = blockEvents(message.blocks[0]!, 0);
  if (!(await writeEvents(ctx, [messageStartEvent(message), PING_EVENT, start!, first!], 0))) return;
  if (variant === 'cut_mid_event') {
    const whole = formatSse(second!);
    if (await write(ctx.res, whole.slice(0, Math.floor(whole.length / 2)), ctx.signal)) ctx.destroy();
    return;
  }
  if (
    !(await write(
      ctx.res,
      'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,\n\n',
      ctx.signal,
    ))
  )
    return;
  ctx.res.end();
}

function startSse(ctx: ReplyContext, headers: Record<string, string> = {}): void {
  ctx.res.writeHead(200, {
    ...headers,
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    'request-id': ctx.requestId,
  });
  ctx.res.flushHeaders();
}

/** Writes events in order, pausing `delayMs` between them; false when the client went away. */
async function writeEvents(ctx: ReplyContext, events: SseEvent[], delayMs: number): Promise<boolean> {
  for (const [i, event] of events.entries()) {
    if (i > 0 && delayMs > 0 && !(await pause(delayMs, ctx))) return false;
    if (ctx.signal.aborted || ctx.res.destroyed) return false;
    if (!(await write(ctx.res, formatSse(event), ctx.signal))) return false;
  }
  return !ctx.signal.aborted;
}

/** Resolves true once the chunk is flushed, false when the write failed or the client went away
 * (a write onto a destroyed socket may never call back, hence the signal). */
function write(res: ServerResponse, chunk: string, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    const onAbort = (): void => resolve(false);
    signal.addEventListener('abort', onAbort, { once: true });
    res.write(chunk, (error) => {
      signal.removeEventListener('abort', onAbort);
      resolve(error == null);
    });
  });
}

/** Waits `ms`, or less once the reply is hurried; false when the client went away. */
async function pause(ms: number, ctx: ReplyContext): Promise<boolean> {
  // Hurried or gone, the sleep ends early either way: the signal says which.
  if (!ctx.pacing.aborted) await sleep(ms, undefined, { signal: ctx.pacing }).catch(() => undefined);
  return !ctx.signal.aborted;
}
