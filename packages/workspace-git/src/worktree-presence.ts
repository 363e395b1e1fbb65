import { realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import type { WorktreeFacts } from '@tether/protocol';
import { type GitContext, gitPathOf, runGit } from './run-git.js';

export async function isDirectory(folder: string): Promise<boolean> {
  return stat(folder).then(
    (found) => found.isDirectory(),
    () => false,
  );
}

/** The folder is there and is the top of a git worktree (not just any folder, nor one inside another checkout). */
export async function worktreePresent(git: GitContext, worktreePath: string): Promise<boolean> {
  if (!(await isDirectory(worktreePath))) return false;
  const result = await runGit(git, { cwd: worktreePath, args: ['rev-parse', '--show-toplevel'] });
  if (result.exitCode !== 0) return false;
  const topLevel = gitPathOf(result.stdout);
  return topLevel === (await realpath(worktreePath));
}

/** The folder is still a git repository (not moved away or deleted since the worktree was made from it). */
export async function isRepository(git: GitContext, folder: string): Promise<boolean> {
  return (
    (await isDirectory(folder)) && (await runGit(git, { cwd: folder, args: ['rev-parse', '--git-dir'] })).exitCode === 0
  );
}

/**
 * Where the commands for the whole repository run (branches, worktree registrations): the folder the session
 * was made from, unless that was a linked worktree removed since. Its worktree still belongs to the repository
 * that linked worktree did, which git names as the worktree's common folder; the recorded folder stays as
 * the host named it.
 */
export async function reachableRepository(git: GitContext, worktree: WorktreeFacts): Promise<string> {
  if ((await isRepository(git, worktree.repository)) || !(await isDirectory(worktree.path))) return worktree.repository;
  const common = await runGit(git, { cwd: worktree.path, args: ['rev-parse', '--git-common-dir'] });
  if (common.exitCode !== 0) return worktree.repository;
  return path.resolve(worktree.path, gitPathOf(common.stdout));
}
