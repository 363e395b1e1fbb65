import { StringDecoder } from 'node:string_decoder';
import { stripTerminalEscapes } from './terminal-escapes.js';

export const defaultMaxLineBytes = 64 * 1024 * 1024;

export type DecodedLine =
  | { readonly kind: 'json'; readonly value: unknown }
  | { readonly kind: 'junk'; readonly length: number }
  | { readonly kind: 'oversized'; readonly length: number };

/**
 * A line's parse, or null for nothing (blank, or taken as text by `takeLine`). A terminal-minded
 * child may print escape sequences around its output.
 */
function decodeLine(line: string, takeLine: ((text: string) => boolean) | undefined): DecodedLine | null {
  let text = line.endsWith('\r') ? line.slice(0, -1) : line;
  if (text.length === 0) return null;
  if (text.charCodeAt(0) !== 123 /* { */) {
    text = stripTerminalEscapes(text).trim();
    if (text.length === 0) return null;
  }
  if (takeLine?.(text)) return null;
  try {
    return { kind: 'json', value: JSON.parse(text) };
  } catch {
    return { kind: 'junk', length: line.length };
  }
}

/**
 * NDJSON framing for a child's stdout: UTF-8 safe across chunk boundaries, tolerant of blank
 * lines, ANSI junk and partial lines; a line longer than the bound is dropped, not buffered.
 */
export class LineDecoder {
  private readonly decoder = new StringDecoder('utf8');
  private readonly maxLineBytes: number;
  private readonly takeLine: ((text: string) => boolean) | undefined;
  private partial = '';
  private discarding = false;
  private discardedLength = 0;

  /**
   * `takeLine` may take a line as text before it is parsed (true: taken, nothing is emitted for it):
   * a consumer that recognises its most frequent line from the text spares the parse.
   */
  constructor(options: { maxLineBytes?: number; takeLine?: (text: string) => boolean } = {}) {
    this.maxLineBytes = options.maxLineBytes ?? defaultMaxLineBytes;
    this.takeLine = options.takeLine;
  }

  push(chunk: Buffer | string, onLine: (line: DecodedLine) => void): void {
    const text = typeof chunk === 'string' ? chunk : this.decoder.write(chunk);
    let start = 0;
    for (let newline = text.indexOf('\n'); newline !== -1; newline = text.indexOf('\n', start)) {
      const piece = text.slice(start, newline);
      start = newline + 1;
      if (this.discarding) {
        onLine({ kind: 'oversized', length: this.discardedLength + piece.length });
        this.discarding = false;
        this.discardedLength = 0;
        continue;
      }
      const line = this.partial.length > 0 ? this.partial + piece : piece;
      this.partial = '';
      if (line.length > this.maxLineBytes) {
        onLine({ kind: 'oversized', length: line.length });
        continue;
      }
      const decoded = decodeLine(line, this.takeLine);
      if (decoded) onLine(decoded);
    }
    const rest = text.slice(start);
    if (this.discarding) {
      this.discardedLength += rest.length;
    } else if (this.partial.length + rest.length > this.maxLineBytes) {
      this.discarding = true;
      this.discardedLength = this.partial.length + rest.length;
      this.partial = '';
    } else if (rest.length > 0) {
      this.partial += rest;
    }
  }

  /** The stream ended: a final line without a newline still counts. */
  end(onLine: (line: DecodedLine) => void): void {
    const rest = this.partial + this.decoder.end();
    this.partial = '';
    if (this.discarding) {
      onLine({ kind: 'oversized', length: this.discardedLength + rest.length });
      this.discarding = false;
      return;
    }
    const decoded = decodeLine(rest, this.takeLine);
    if (decoded) onLine(decoded);
  }
}
