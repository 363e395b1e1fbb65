/** One dispatched Server-Sent Events frame. Comments (`: ping`) never become frames. */
export interface SseFrame {
  /** The frame's `id:` field, when it had one. */
  readonly id: string | undefined;
  /** The frame's `event:` field; "message" when it named none (the SSE default). */
  readonly event: string;
  /** The `data:` lines joined with "\n". */
  readonly data: string;
}

const lineEnd = /\r\n|\r|\n/g;

/**
 * An incremental parser for the text/event-stream format (the WHATWG rules we need): feed it
 * decoded text as it arrives, in chunks cut anywhere, and it returns the frames completed so far.
 * A frame still open when the stream ends is never returned, so a connection cut mid-frame cannot
 * deliver half an event.
 */
export class SseParser {
  #pending = '';
  #started = false;
  #data: string[] = [];
  #event = '';
  #id: string | undefined = undefined;
  #afterCarriageReturn = false;

  push(text: string): SseFrame[] {
    let input = this.#pending + text;
    if (!this.#started && input.length > 0) {
      this.#started = true;
      if (input.startsWith('\uFEFF')) input = input.slice(1);
    }
    if (this.#afterCarriageReturn && input.length > 0) {
      // The previous chunk ended in "\r": a "\n" here completes that line ending, not a blank line.
      this.#afterCarriageReturn = false;
      if (input.startsWith('\n')) input = input.slice(1);
    }
    const frames: SseFrame[] = [];
    let position = 0;
    lineEnd.lastIndex = 0;
    for (let match = lineEnd.exec(input); match !== null; match = lineEnd.exec(input)) {
      this.#line(input.slice(position, match.index), frames);
      position = match.index + match[0].length;
      // A "\r" at the very end may be the first half of "\r\n" split across chunks; the line ends
      // now (a server that ends lines with "\r" alone must not wait for its next write).
      if (match[0] === '\r' && position === input.length) this.#afterCarriageReturn = true;
    }
    this.#pending = input.slice(position);
    return frames;
  }

  #line(line: string, frames: SseFrame[]): void {
    if (line === '') {
      if (this.#data.length > 0) frames.push({ id: this.#id, event: this.#event || 'message', data: this.#data.join('\n') });
      this.#data = [];
      this.#event = '';
      this.#id = undefined;
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') this.#data.push(value);
    else if (field === 'event') this.#event = value;
    else if (field === 'id' && !value.includes('\0')) this.#id = value;
    // `retry:` and unknown fields are ignored: the client keeps its own reconnection schedule.
  }
}
