import { type GitContext, runGit } from './run-git.js';

export async function branchExists(git: GitContext, repository: string, branch: string): Promise<boolean> {
  const result = await runGit(git, {
    cwd: repository,
    args: ['show-ref', '--verify', '--quiet', `refs/heads/${branch}`],
  });
  return result.exitCode === 0;
}

/**
 * The branch whose name keeps `branch` from being made: `a` for `a/b`, or `a/b` for `a` (git stores a
 * branch name as a path, so one cannot be both a branch and a folder of branches); null when none does.
 */
export async function clashingBranch(git: GitContext, repository: string, branch: string): Promise<string | null> {
  const parts = branch.split('/');
  for (let length = 1; length < parts.length; length++) {
    const prefix = parts.slice(0, length).join('/');
    if (await branchExists(git, repository, prefix)) return prefix;
  }
  const below = await runGit(git, {
    cwd: repository,
    args: ['for-each-ref', '--count=1', '--format=%(refname)', `refs/heads/${branch}/`],
  });
  const name = below.exitCode === 0 ? below.stdout.toString('utf8').trim() : '';
  return name.startsWith('refs/heads/') ? name.slice('refs/heads/'.length) : null;
}

/**
 * Where `branch` is checked out in a worktree of the repository other than `except` (its main checkout,
 * or a linked worktree: one moved with `git worktree move`, say), or null when it is not.
 */
export async function branchCheckedOutElsewhere(
  git: GitContext,
  repository: string,
  branch: string,
  except: string,
): Promise<string | null> {
  const result = await runGit(git, { cwd: repository, args: ['worktree', 'list', '--porcelain', '-z'] });
  if (result.exitCode !== 0) return null;
  let folder: string | null = null;
  for (const line of result.stdout.toString('utf8').split('\0')) {
    if (line.startsWith('worktree ')) folder = line.slice('worktree '.length);
    else if (line === `branch refs/heads/${branch}` && folder !== null && folder !== except) return folder;
  }
  return null;
}

/** The full commit id `ref` names, or null when it names no commit. */
export async function resolveCommit(git: GitContext, repository: string, ref: string): Promise<string | null> {
  const result = await runGit(git, { cwd: repository, args: ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`] });
  const commit = result.stdout.toString('utf8').trim();
  return result.exitCode === 0 && commit.length > 0 ? commit : null;
}
