import { createHash } from 'node:crypto';
import type { Command } from '@tether/protocol';

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, entry]) => entry !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, entry]) => `${JSON.stringify(key)}:${canonical(entry)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * Identifies what a command asks for, without its commandId. A hash, so a redacted prompt's
 * text is not kept in the receipts table.
 */
export function fingerprintCommand(command: Command): string {
  const { commandId: _commandId, ...rest } = command;
  return createHash('sha256').update(canonical(rest)).digest('hex');
}
