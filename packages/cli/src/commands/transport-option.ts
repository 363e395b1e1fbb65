import type { ClaudeTransport } from '@tether/provider-claude';
import { UsageError } from '../usage-error.js';

export const transportHelp =
  "--transport T      how Tether talks to Claude Code: cli (default, its stdio) or sdk (the Agent SDK's query())";

/** The --transport value: cli (default) or sdk; anything else is a usage error naming both. */
export function parseTransport(value: string | undefined): ClaudeTransport {
  if (value === undefined || value === 'cli' || value === 'sdk') return value ?? 'cli';
  throw new UsageError(`--transport takes cli or sdk, not "${value}".`);
}
