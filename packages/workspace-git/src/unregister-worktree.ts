import { runGitRetryingLocks } from './git-lock-retry.js';
import { type GitContext, gitFailed } from './run-git.js';

/**
 * Drops git's registration of one worktree, its folder there or not: `git worktree remove --force`
 * takes a registration whose folder is gone too. Never `git worktree prune`, which would also drop
 * the registrations of the user's own worktrees whose folders are away for the moment (an unmounted
 * drive), losing their index and HEAD log. A path git has no registration of is left as it is.
 */
export async function unregisterWorktree(git: GitContext, repository: string, worktreePath: string): Promise<void> {
  // Twice: a worktree its owner locked goes too, once discarding it was asked for (a release keeps it otherwise).
  const call = { cwd: repository, args: ['worktree', 'remove', '--force', '--force', worktreePath] };
  const removed = await runGitRetryingLocks(git, call);
  if (removed.exitCode !== 0 && !/is not a working tree/.test(removed.stderr)) throw gitFailed(call, removed);
}
