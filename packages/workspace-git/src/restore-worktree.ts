import { mkdir, readdir } from 'node:fs/promises';
import path from 'node:path';
import type { WorktreeFacts } from '@tether/protocol';
import type { PreparedWorkspace } from '@tether/runtime';
import { runGitRetryingLocks } from './git-lock-retry.js';
import { branchExists, clashingBranch, resolveCommit } from './git-refs.js';
import type { RepositoryQueue } from './repository-queue.js';
import { type GitContext, type GitResult, gitFailed, unstoppable } from './run-git.js';
import { changedFilesAgainstBase } from './session-diff.js';
import { isDirectory, isRepository, worktreePresent } from './worktree-presence.js';
import { workspaceRefusal } from './workspace-refusal.js';
import { ownedRoot } from './worktree-root.js';
import { unregisterWorktree } from './unregister-worktree.js';
import { undoWorktree } from './prepare-worktree.js';

/**
 * The worktree moved with the folder that holds it (the data dir moved, its default worktree root
 * inside it): not where it was recorded, but in this acquirer's root under the session's id, and
 * nothing at the recorded path. git's link to it is repaired and it is used where it is now; re-adding
 * it at the old path from its branch would leave its uncommitted work behind, unseen.
 */
async function movedWithItsRoot(
  git: GitContext,
  worktree: WorktreeFacts,
  where: { readonly root: string; readonly sessionId: string },
): Promise<WorktreeFacts | null> {
  const candidate = path.join(where.root, where.sessionId);
  if (candidate === worktree.path || (await isDirectory(worktree.path)) || !(await isDirectory(candidate))) return null;
  await ownedRoot(where.root);
  const repair = { cwd: worktree.repository, args: ['worktree', 'repair', candidate] };
  const repaired = await runGitRetryingLocks(git, repair);
  if (repaired.exitCode !== 0 || !(await worktreePresent(git, candidate))) return null;
  return { ...worktree, path: candidate };
}

/**
 * Makes a session's worktree usable again: as it is when it is there; otherwise (its folder deleted, or
 * removed by a clean release) re-added at the same path on its branch, the branch re-created at the base
 * commit when it is gone too.
 */
export async function restoreWorktree(
  git: GitContext,
  queue: RepositoryQueue,
  prepared: PreparedWorkspace,
  where: { readonly root: string; readonly sessionId: string },
): Promise<PreparedWorkspace> {
  const recorded = prepared.worktree;
  if (!recorded) return prepared;
  const moved = await movedWithItsRoot(git, recorded, where);
  const worktree = moved ?? recorded;
  if (moved) prepared = { ...prepared, directory: moved.path, worktree: moved };
  // The root may have been loosened, or changed hands, since the worktree was made in it: whoever can
  // write there could have put a folder of their own (with hooks run as this user) in its place.
  await ownedRoot(path.dirname(worktree.path));
  if (await worktreePresent(git, worktree.path)) return { ...prepared, state: 'ready', keptBecause: null };
  // A clean release removed the session's branch with its worktree: a branch of that name now is someone else's.
  const branchRemoved = prepared.state === 'removed';
  await queue(worktree.repository, () => readdWorktree(git, worktree, branchRemoved));
  // Re-added from a kept branch, it holds that branch's commits; re-created at the base, nothing.
  const changedFiles = (await changedFilesAgainstBase(git, worktree)).length;
  return { ...prepared, state: 'ready', keptBecause: null, changedFiles };
}

async function readdWorktree(git: GitContext, worktree: WorktreeFacts, branchRemoved: boolean): Promise<void> {
  const { repository, branch, baseCommit } = worktree;
  if (!(await isRepository(git, repository))) {
    throw workspaceRefusal(
      'not_a_git_repository',
      `The session's repository ${repository} is gone or no longer a git repository, so its worktree cannot be re-created. Put the repository back, or open a new session.`,
    );
  }
  if ((await isDirectory(worktree.path)) && (await readdir(worktree.path)).length > 0) {
    throw workspaceRefusal(
      'worktree_path_taken',
      `The session's worktree folder ${worktree.path} holds files but is no longer a git worktree. Move them away and reopen the session.`,
    );
  }
  // A registration left from the folder's removal by hand would make git refuse the path.
  await unregisterWorktree(git, repository, worktree.path);
  let args: string[];
  const exists = await branchExists(git, repository, branch);
  if (exists && branchRemoved) {
    throw workspaceRefusal(
      'branch_exists',
      `The repository ${repository} has a branch ${branch} again, made after Tether removed the session's branch of that name when the session closed: it is not the session's, and the session will not take it over. Rename that branch (git branch -m ${branch} NEW), or open a new session.`,
    );
  }
  const clash = exists ? null : await clashingBranch(git, repository, branch);
  if (clash !== null) {
    throw workspaceRefusal(
      'branch_exists',
      `The repository ${repository} has a branch ${clash}, so git cannot make the session's branch ${branch} again next to it (one name cannot be both a branch and a folder of branches), and its worktree cannot be re-created. Rename that branch (git branch -m ${clash} NEW-NAME), or open a new session.`,
    );
  }
  if (exists) {
    args = ['worktree', 'add', worktree.path, branch];
  } else if (await resolveCommit(git, repository, baseCommit)) {
    args = ['worktree', 'add', '-b', branch, worktree.path, baseCommit];
  } else {
    throw workspaceRefusal(
      'unknown_ref',
      `Neither the branch ${branch} nor the base commit ${baseCommit} is in ${repository} any more, so the worktree cannot be re-created. Open a new session.`,
    );
  }
  await mkdir(path.dirname(worktree.path), { recursive: true, mode: 0o700 });
  const made = { repository, worktreePath: worktree.path, branch, baseCommit };
  let added: GitResult;
  try {
    added = await runGitRetryingLocks(git, { cwd: repository, args });
  } catch (error) {
    // Stopped by the host's shutdown (a Ctrl-C while a reopen makes it again), or past its time: what it
    // began goes, and so does a branch made for it, but never the session's own kept branch. The session
    // stays as it was recorded, with nothing left that it does not name.
    // The stop is what the caller is told: a step of the undo that fails must not take its place.
    await undoWorktree(unstoppable(git), made, exists ? 'keep' : 'if_unmoved').catch(() => undefined);
    throw error;
  }
  if (added.exitCode === 0) return;
  if (/already checked out at|already used by worktree/i.test(added.stderr)) {
    throw workspaceRefusal(
      'branch_checked_out',
      `The session's branch ${branch} is checked out in another folder (git worktree list shows where), so its worktree cannot be re-created at ${worktree.path}. Move that worktree back there (git worktree move FOLDER ${worktree.path}) or switch that checkout to another branch, then reopen the session.`,
    );
  }
  throw gitFailed({ cwd: repository, args }, added);
}
