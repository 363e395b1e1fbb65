import { stripTerminalEscapes } from '../codec/terminal-escapes.js';

// Control characters left after the escapes are gone, except newline and tab.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is what this removes.
const controlCharacters = /[\u0000-\u0008\u000b-\u001f\u007f\u0080-\u009f]/g;

/** Text from the CLI made safe to store and show: no escapes or control characters, bounded. */
export function sanitizeText(value: unknown, limit: number): string | undefined {
  if (typeof value !== 'string') return undefined;
  const clean = stripTerminalEscapes(value).replace(controlCharacters, '');
  if (clean.length === 0) return undefined;
  return clean.length > limit ? `${clean.slice(0, limit - 1)}…` : clean;
}

const stringLimit = 32 * 1024;

/** A copy of a tool input for display, with very long strings shortened so one prompt cannot bloat the log. */
export function boundedInput(input: Record<string, unknown>): Record<string, unknown> {
  const visit = (value: unknown, depth: number): unknown => {
    if (typeof value === 'string')
      return value.length > stringLimit
        ? `${value.slice(0, stringLimit)}… [${value.length - stringLimit} more characters]`
        : value;
    if (depth > 20) return '[nested too deeply]';
    if (Array.isArray(value)) return value.slice(0, 1000).map((item) => visit(item, depth + 1));
    if (value !== null && typeof value === 'object') {
      return Object.fromEntries(
        Object.entries(value as Record<string, unknown>)
          .slice(0, 1000)
          .map(([key, item]) => [key, visit(item, depth + 1)]),
      );
    }
    return value;
  };
  return visit(input, 0) as Record<string, unknown>;
}
