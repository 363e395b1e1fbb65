import { type GitContext, runGit } from './run-git.js';

export async function branchExists(git: GitContext, repository: string, branch: string): Promise<boolean> {
  const result = await runGit(git, {
    cwd: repository,
    args: ['show-ref', '--verify', '--quiet', `refs/heads/${branch}`],
  });
  return result.exitCode === 0;
}

/** The full commit id `ref` names, or null when it names no commit. */
export async function resolveCommit(git: GitContext, repository: string, ref: string): Promise<string | null> {
  const result = await runGit(git, { cwd: repository, args: ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`] });
  const commit = result.stdout.toString('utf8').trim();
  return result.exitCode === 0 && commit.length > 0 ? commit : null;
}
