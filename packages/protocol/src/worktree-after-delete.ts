import { type WorkspaceStatus, keptBecauseWords } from './workspace.js';

/** How a surface shows a path and a branch name in its text (the CLI makes them terminal-safe). */
export interface ShownNames {
  readonly path: (path: string) => string;
  readonly branch: (branch: string) => string;
}

const asGiven: ShownNames = { path: (path) => path, branch: (branch) => branch };

/**
 * What a delete did with the session's worktree, as the words that follow "deleted SESSION" (one
 * wording, for the CLI and the web UI alike): removed with its branch, left to the session sharing
 * it or to the checkout holding its branch, or kept and why. Empty when the session had no worktree,
 * or its close had removed it already (`before`: the status the caller knew before the delete).
 */
export function worktreeAfterDelete(
  before: WorkspaceStatus | null,
  after: WorkspaceStatus | null,
  shown: ShownNames = asGiven,
): string {
  const worktree = after?.worktree;
  if (!after || !worktree || before?.state === 'removed') return '';
  const branch = shown.branch(worktree.branch);
  const worktreeAndBranch = `worktree ${shown.path(worktree.path)} and branch ${branch}`;
  if (after.state === 'removed') return ` with its ${worktreeAndBranch}`;
  if (after.keptBecause === 'checked_out_elsewhere')
    return `; its branch ${branch} stays checked out in another folder (git worktree list shows where)`;
  if (after.keptBecause === 'in_use')
    return `; its ${worktreeAndBranch} stay with the session that shares them (a fork, or the session it was forked from)`;
  const why = after.keptBecause === null ? 'it holds work' : keptBecauseWords[after.keptBecause];
  return `; its worktree is kept at ${shown.path(worktree.path)} on branch ${branch}: ${why}`;
}
