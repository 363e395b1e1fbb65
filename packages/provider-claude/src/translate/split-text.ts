import { deltaTextLimit } from '@tether/protocol';

/** Splits text into pieces of at most `limit` UTF-16 units without cutting a surrogate pair. */
export function splitText(text: string, limit = deltaTextLimit): string[] {
  if (text.length <= limit) return [text];
  const pieces: string[] = [];
  let start = 0;
  while (start < text.length) {
    let end = Math.min(start + limit, text.length);
    if (end < text.length) {
      const code = text.charCodeAt(end - 1);
      if (code >= 0xd800 && code <= 0xdbff) end -= 1;
    }
    pieces.push(text.slice(start, end));
    start = end;
  }
  return pieces;
}
