import { AgentError, type WorktreeFacts } from '@tether/protocol';

/** A git_worktree workspace that cannot be prepared or used: invalid_workspace, with a reason a host can branch on. */
export function workspaceRefusal(reason: string, message: string): AgentError {
  return new AgentError({ code: 'invalid_workspace', message, details: { reason } });
}

/**
 * The session's repository was moved or deleted (its worktree's link into it dangles): `happened` says what
 * that stopped, `orElse` any other way out. Moved, it is found again by `git worktree repair` run in it.
 */
export function repositoryGone(worktree: WorktreeFacts, happened: string, orElse = ''): AgentError {
  return workspaceRefusal(
    'not_a_git_repository',
    `The session's repository ${worktree.repository} is gone or no longer a git repository (moved or deleted?), so ${happened}. Put the repository back where it was; or, if you moved it, run git worktree repair ${worktree.path} in it where it is now. Then retry.${orElse}`,
  );
}
