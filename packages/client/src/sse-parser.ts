import { type EventSourceParser, createParser } from 'eventsource-parser';

/** One dispatched Server-Sent Events frame. Comments (`: ping`) never become frames. */
export interface SseFrame {
  /** The frame's `id:` field, when it had one. */
  readonly id: string | undefined;
  /** The frame's `event:` field; "message" when it named none (the SSE default). */
  readonly event: string;
  /** The `data:` lines joined with "\n". */
  readonly data: string;
}

/**
 * An incremental text/event-stream parser (eventsource-parser, which follows the WHATWG rules: any
 * line ending, a "\r\n" split across chunks, a leading BOM): feed it decoded text as it arrives, in
 * chunks cut anywhere, and it returns the frames completed so far. A frame still open when the
 * stream ends is never returned, so a connection cut mid-frame cannot deliver half an event.
 */
export class SseParser {
  readonly #completed: SseFrame[] = [];
  readonly #parser: EventSourceParser = createParser({
    onEvent: ({ id, event, data }) => this.#completed.push({ id, event: event ?? 'message', data }),
    // `retry:` and unknown fields are ignored (no onRetry / onError): the client keeps its own reconnection schedule.
  });

  push(text: string): SseFrame[] {
    this.#parser.feed(text);
    return this.#completed.splice(0);
  }
}
