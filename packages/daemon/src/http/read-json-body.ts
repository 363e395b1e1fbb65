import type { IncomingMessage } from 'node:http';
import { AgentError } from '@tether/protocol';
import { invalidRequest } from '../errors/error-response.js';

export function bodyTooLarge(maxBytes: number): AgentError {
  return new AgentError({
    code: 'payload_too_large',
    message: `The request body is larger than ${maxBytes} bytes, the most this route takes. Send a smaller one (a command: fewer or shorter input parts).`,
    details: { reason: 'body_too_large' },
  });
}

/** How long, and how much more, an oversized body is read and dropped before it is refused. */
const drainMs = 2_000;

/**
 * An oversized body refused once the client has sent the rest of it (dropped as it comes), or after
 * drainMs or another maxBytes: a socket closed while it still receives is reset, and a client still
 * sending then loses the 413 for a write error. A body declared past twice the limit is refused at once.
 */
function refuseAfterDraining(incoming: IncomingMessage, maxBytes: number, drainedAlready: number): Promise<never> {
  const declared = Number(incoming.headers['content-length']);
  const refusal = bodyTooLarge(maxBytes);
  if ((Number.isFinite(declared) && declared > 2 * maxBytes) || incoming.readableEnded) return Promise.reject(refusal);
  return new Promise((_resolve, reject) => {
    let drained = drainedAlready;
    const done = () => {
      clearTimeout(timer);
      incoming.off('data', onData);
      incoming.off('end', done);
      incoming.off('error', done);
      incoming.off('close', done);
      reject(refusal);
    };
    const onData = (chunk: Buffer) => {
      drained += chunk.length;
      if (drained > 2 * maxBytes) done();
    };
    const timer = setTimeout(done, drainMs);
    incoming.on('data', onData);
    incoming.on('end', done);
    incoming.on('error', done);
    incoming.on('close', done);
  });
}

/** The raw body, read as it arrives and refused once it passes maxBytes, whether its length was declared or not (chunked). */
function readBody(incoming: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const declared = Number(incoming.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) return refuseAfterDraining(incoming, maxBytes, 0);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = () => {
      incoming.off('data', onData);
      incoming.off('end', onEnd);
      incoming.off('error', onError);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= maxBytes) return void chunks.push(chunk);
      stop();
      chunks.length = 0;
      refuseAfterDraining(incoming, maxBytes, size).catch(reject);
    };
    const onEnd = () => {
      stop();
      resolve(Buffer.concat(chunks, size));
    };
    // The connection closed (the client went away, or the request time limit cut it) before the body
    // ended: the client's doing, and nobody is left to read the answer; typed so it is not logged or
    // counted as a failure of the daemon's.
    const onError = () => {
      stop();
      chunks.length = 0;
      reject(
        invalidRequest(
          'The request body ended before it was complete (the connection closed). Send the whole command again, with the same commandId.',
          'body_incomplete',
        ),
      );
    };
    incoming.on('data', onData);
    incoming.on('end', onEnd);
    incoming.on('error', onError);
  });
}

/** Refuses bytes that are not UTF-8; a byte-order mark before the JSON is dropped, as RFC 8259 lets a parser. */
const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/**
 * The request body as JSON, read straight from the Node request (Hono's bodyLimit answered a chunked
 * body with a 500). Empty or malformed → invalid_command (the parser's message is not echoed: it
 * quotes the body); past maxBytes → payload_too_large (413).
 */
export async function readJsonBody(incoming: IncomingMessage, maxBytes: number): Promise<unknown> {
  const body = await readBody(incoming, maxBytes);
  if (body.length === 0)
    throw invalidRequest('The request has no body. Send one command as a JSON object.', 'empty_body');
  let text: string;
  try {
    // Decoded strictly: bytes that are not UTF-8 would otherwise be stored as U+FFFD, the command changed unseen.
    text = strictUtf8.decode(body);
  } catch {
    throw invalidRequest('The request body is not valid UTF-8. Encode the command as UTF-8 JSON.', 'malformed_json');
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw invalidRequest('The request body is not valid JSON. Send one command as a JSON object.', 'malformed_json');
  }
}
