import type { DiagnosticLevel } from '@tether/protocol';

/** What a warning or error diagnostic means for the person at the terminal, for the codes that change what they see. */
const words: Readonly<Record<string, string>> = {
  'workspace.baseline_failed':
    'the worktree could not be read before the turn: the files it changes are not counted (tether diff shows the work)',
  'workspace.changes_unreadable':
    "the run's changed files could not be read (tether diff shows git's error): the count shown is not this run's",
  'workspace.restore_failed': "the session's worktree could not be made again: see tether show for its state",
  'workspace.release_failed': "the session's worktree could not be released: it is kept as it was",
  'claude.conversation_not_kept':
    "the agent's process ended with no conversation kept to go on from (before its first turn was recorded, or an ephemeral session's): the next turn starts anew",
  'session.conversation_not_kept':
    'the agent kept no conversation to go on from (its host ended during the first turn): the next turn starts anew',
  'agent.start_failed': "the session's agent could not be started ahead of the first turn: that turn starts it",
};

/**
 * A line for a diagnostic a person should see: an error, or a warning that changes what they see (the
 * codes above); null for the rest, which `--json` still carries.
 */
export function diagnosticLine(level: DiagnosticLevel, code: string): string | null {
  const meaning = words[code];
  if (level === 'error') return `error: ${meaning ?? code}`;
  return level === 'warning' && meaning !== undefined ? `warning: ${meaning}` : null;
}
