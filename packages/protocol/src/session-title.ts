import type { InputPart } from './input.js';

/** The longest title, in UTF-16 code units (what a string's length counts), its ellipsis included. */
export const sessionTitleMaxLength = 200;

const ellipsis = '…';

/** Whether the code unit is the first half of a surrogate pair (cutting after it would leave half a character). */
function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/**
 * The title a turn gives its session: its text with whitespace runs collapsed to one space, cut to
 * sessionTitleMaxLength with an ellipsis. Null for a control run (a slash command names no
 * conversation), for redacted input (the title never holds text the log does not), and for input
 * that is only whitespace.
 */
export function turnTitle(started: {
  readonly input: readonly InputPart[] | null;
  readonly control?: unknown;
}): string | null {
  if (started.control !== undefined || started.input === null) return null;
  const text = started.input
    .flatMap((part) => (part.type === 'text' ? [part.text] : []))
    .join(' ')
    .replace(/\s+/g, ' ')
    .trim();
  if (text === '') return null;
  if (text.length <= sessionTitleMaxLength) return text;
  let end = sessionTitleMaxLength - ellipsis.length;
  if (isHighSurrogate(text.charCodeAt(end - 1))) end -= 1;
  return `${text.slice(0, end).trimEnd()}${ellipsis}`;
}
