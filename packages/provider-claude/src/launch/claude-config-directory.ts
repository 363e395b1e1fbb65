import path from 'node:path';

function isSet(value: string | undefined): value is string {
  return value !== undefined && value.trim() !== '';
}

/**
 * Where Claude Code keeps its user settings, sign-in and transcripts for an agent started with
 * `environment`: `$CLAUDE_CONFIG_DIR` (an empty one counts as unset), else `~/.claude`; undefined
 * with neither.
 */
export function claudeConfigDirectory(environment: Readonly<Record<string, string | undefined>>): string | undefined {
  if (isSet(environment.CLAUDE_CONFIG_DIR)) return environment.CLAUDE_CONFIG_DIR;
  return isSet(environment.HOME) ? path.join(environment.HOME, '.claude') : undefined;
}
