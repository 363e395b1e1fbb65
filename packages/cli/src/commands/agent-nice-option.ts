import { isAgentNice } from '@tether/provider-claude';
import { UsageError } from '../usage-error.js';

/** --agent-nice N: how much nicer than this process its agents run while more than one runs; undefined keeps the provider's default (10). */
export function parseAgentNice(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const nice = Number(value);
  if (value.trim() === '' || !isAgentNice(nice)) {
    throw new UsageError(`--agent-nice takes a whole number from 0 (agents run as Tether does) to 19, not "${value}".`);
  }
  return nice;
}
