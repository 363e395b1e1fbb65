import { existsSync } from 'node:fs';
import { readdir, rm, rmdir } from 'node:fs/promises';
import path from 'node:path';
import type { WorktreeFacts } from '@tether/protocol';
import type { PreparedWorkspace, ReleaseOptions } from '@tether/runtime';
import { runGitRetryingLocks } from './git-lock-retry.js';
import { branchCheckedOutElsewhere, branchExists, resolveCommit } from './git-refs.js';
import type { RepositoryQueue } from './repository-queue.js';
import { type GitContext, gitFailed, gitPathOf, gitText, runGit } from './run-git.js';
import { changedFilesAgainstBase } from './session-diff.js';
import { isDirectory, isRepository, reachableRepository, worktreePresent } from './worktree-presence.js';
import { ownedRoot } from './worktree-root.js';
import { unregisterWorktree } from './unregister-worktree.js';
import { repositoryGone } from './workspace-refusal.js';

/**
 * Keeps a worktree that holds anything of the user's (uncommitted or untracked files, commits beyond the base)
 * or that another open session works in; removes it and its branch otherwise. discardChanges removes work too,
 * but never a worktree in use: that would pull the folder from under a running session.
 */
export async function releaseWorktree(
  git: GitContext,
  queue: RepositoryQueue,
  prepared: PreparedWorkspace,
  options: ReleaseOptions,
): Promise<PreparedWorkspace> {
  const recorded = prepared.worktree;
  if (!recorded || prepared.state === 'removed') return prepared;
  if (options.inUse) return { ...prepared, state: 'kept', keptBecause: 'in_use' };
  const worktree = { ...recorded, repository: await reachableRepository(git, recorded) };
  if (!(await isRepository(git, worktree.repository))) {
    if (options.discardChanges) {
      // The repository was moved or deleted, and its branch with it as far as anyone here can reach:
      // what is left is the worktree's folder, which Tether made in a root of its own.
      await ownedRoot(path.dirname(worktree.path));
      await rm(worktree.path, { recursive: true, force: true });
      return { ...prepared, state: 'removed', keptBecause: null, changedFiles: 0 };
    }
    // Nothing can be checked for work, nor removed: said as such, not as git failing in a folder that is gone.
    throw repositoryGone(
      worktree,
      `Tether cannot check its worktree ${worktree.path} for work, and removed nothing`,
      " Or, to remove the worktree's folder with whatever it holds, delete the session with its changes discarded (tether delete --discard-changes; DELETE /v1/sessions/:id?discardWorkspaceChanges=true).",
    );
  }
  const present = await worktreePresent(git, worktree.path);
  if (options.discardChanges && !present && existsSync(worktree.path)) {
    // What is left of a worktree whose .git file is gone (removed by hand, or a discard cut short by a
    // signal): git refuses to remove such a folder ("validation failed"), so it goes first, from the
    // root Tether made it in; git then drops the registration of a folder that is gone.
    await ownedRoot(path.dirname(worktree.path));
    await rm(worktree.path, { recursive: true, force: true });
  }
  // Its folder gone and its branch checked out in another (the worktree moved with `git worktree move`, or the
  // branch checked out by hand): neither is Tether's to remove, and what that checkout holds is not its to judge.
  // What that checkout holds is not known here: its changed files go uncounted.
  const checkedOutElsewhere = {
    ...prepared,
    state: 'kept',
    keptBecause: 'checked_out_elsewhere',
    changedFiles: null,
  } as const;
  if (!present && (await branchCheckedOutElsewhere(git, worktree.repository, worktree.branch, worktree.path)))
    return checkedOutElsewhere;
  if (!options.discardChanges) {
    const keptBecause =
      present && (await hasUncommittedWork(git, worktree.path))
        ? 'uncommitted_changes'
        : (await hasCommitsBeyondBase(git, worktree, present, options.forDelete === true))
          ? 'commits_beyond_base'
          : null;
    if (keptBecause) {
      const changedFiles = (await changedFilesAgainstBase(git, worktree)).length;
      return { ...prepared, state: 'kept', keptBecause, changedFiles };
    }
    // There but not a worktree git can read (its .git removed or replaced, or its own config broken): git
    // cannot tell what its files hold, and `worktree remove --force` would take them with it (or refuse:
    // "validation failed"). Files in it are kept as uncommitted work, uncounted; an empty folder holds
    // nothing and goes, so the registration and branch go as for any clean worktree.
    if (!present && (await isDirectory(worktree.path))) {
      if ((await readdir(worktree.path)).length > 0)
        return { ...prepared, state: 'kept', keptBecause: 'uncommitted_changes', changedFiles: null };
      await rmdir(worktree.path);
    }
    // Its owner locked it (git worktree lock): theirs to keep until they unlock it.
    if (present && (await isLocked(git, worktree.path)))
      return { ...prepared, state: 'kept', keptBecause: 'locked', changedFiles: 0 };
  }
  const branchLeft = await queue(recorded.repository, () => removeWorktree(git, worktree));
  // The worktree went, its branch did not: checked out in another folder too (git worktree add
  // --ignore-other-worktrees, git checkout --ignore-other-worktrees), which is said, not "removed with its branch".
  if (branchLeft) return checkedOutElsewhere;
  return { ...prepared, state: 'removed', keptBecause: null, changedFiles: 0 };
}

/** The worktree is locked (`git worktree lock`): its administrative folder holds a `locked` file. */
async function isLocked(git: GitContext, worktreePath: string): Promise<boolean> {
  const gitDirectory = gitPathOf(await gitText(git, { cwd: worktreePath, args: ['rev-parse', '--absolute-git-dir'] }));
  return existsSync(path.join(gitDirectory, 'locked'));
}

/** Modified, staged or untracked files (ignored ones are build output, which git itself removes with a worktree). */
async function hasUncommittedWork(git: GitContext, worktreePath: string): Promise<boolean> {
  const status = await gitText(git, {
    cwd: worktreePath,
    args: ['status', '--porcelain=v1', '-z', '--untracked-files=all', '--ignore-submodules=none'],
    // A status refresh would write the agent's index; this look must not take its lock.
    environment: { GIT_OPTIONAL_LOCKS: '0' },
    // Whether it prints anything is the answer: its first byte is enough (a list of every untracked file
    // of an unignored node_modules could run past any bound).
    maxOutputBytes: 1,
    cutOutput: true,
  });
  return status.length > 0 || (await hasFilesInUncheckedSubmodules(git, worktreePath));
}

/** The index of a repository of some millions of files. */
const maxIndexListingBytes = 512 * 1024 * 1024;

/**
 * Files written into a submodule's folder that was never checked out (a worktree's submodules are
 * left empty): git sees none of them (the path is the submodule's, and it has no repository there),
 * so status says nothing, and removing the worktree would take them with it unseen.
 */
async function hasFilesInUncheckedSubmodules(git: GitContext, worktreePath: string): Promise<boolean> {
  const entries = await gitText(git, {
    cwd: worktreePath,
    args: ['ls-files', '--stage', '-z'],
    environment: { GIT_OPTIONAL_LOCKS: '0' },
    // Every tracked file is listed: a large repository's list runs past git's usual bound (16 MiB at
    // ~180,000 files), and a clean worktree of it could then never be released.
    maxOutputBytes: maxIndexListingBytes,
  });
  const submodules = entries
    .split('\0')
    .filter((entry) => entry.startsWith('160000 '))
    .map((entry) => entry.slice(entry.indexOf('\t') + 1));
  for (const submodule of submodules) {
    const folder = path.join(worktreePath, submodule);
    const names: string[] = await readdir(folder).catch(() => []);
    // Checked out (a .git of its own): status above already looked inside it.
    if (names.length > 0 && !names.includes('.git')) return true;
  }
  return false;
}

/**
 * Commits on the session's branch, or on whatever the worktree has checked out, that the base does not have
 * (for a delete: nor what outlives the session without its branch, heldWithoutTheSession); or commits only
 * the worktree's own HEAD log holds.
 */
async function hasCommitsBeyondBase(
  git: GitContext,
  worktree: WorktreeFacts,
  present: boolean,
  forDelete: boolean,
): Promise<boolean> {
  const tips = present ? ['HEAD'] : [];
  if (await branchExists(git, worktree.repository, worktree.branch)) tips.push(`refs/heads/${worktree.branch}`);
  if (tips.length === 0) return false;
  const cwd = present ? worktree.path : worktree.repository;
  const beyond = ['rev-list', '--count', ...tips, '--not', worktree.baseCommit];
  const held = forDelete
    ? await runGit(git, { cwd, args: [...beyond, ...(await heldWithoutTheSession(git, worktree))] })
    : null;
  // A tag naming an object that is gone fails the count: the delete then counts as a close does.
  const count = held?.exitCode === 0 ? held.stdout.toString('utf8') : await gitText(git, { cwd, args: beyond });
  if (Number.parseInt(count, 10) > 0) return true;
  return present && (await hasCommitsOnlyItsHeadLogHolds(git, worktree));
}

/**
 * For a delete, what holds commits once the session and its branch are gone: the commit the repository's own
 * folder has checked out (the session's work merged into its branch, what `git branch -d` checks there) and
 * tags. Not other branches: one based on this session's (another session's) goes with that session by the
 * same rule, and a branch may be deleted any time; nor remote-tracking ones: a push is not a merge, and a
 * fetch --prune drops them.
 */
async function heldWithoutTheSession(git: GitContext, worktree: WorktreeFacts): Promise<string[]> {
  const checkedOut = await runGit(git, { cwd: worktree.repository, args: ['symbolic-ref', '--quiet', 'HEAD'] });
  // The repository's folder has the session's own branch checked out (--ignore-other-worktrees): it holds
  // nothing the branch does not.
  if (checkedOut.exitCode === 0 && checkedOut.stdout.toString('utf8').trim() === `refs/heads/${worktree.branch}`)
    return ['--tags'];
  const head = await resolveCommit(git, worktree.repository, 'HEAD');
  return head === null ? ['--tags'] : [head, '--tags'];
}

/**
 * Commits made on a detached HEAD in the worktree and then left by a checkout (git warns "you are leaving 1
 * commit behind"): no branch, tag or other checkout holds them, only this worktree's HEAD log, which goes
 * with the worktree. Removing it would lose them (until git's gc deletes them for good).
 */
async function hasCommitsOnlyItsHeadLogHolds(git: GitContext, worktree: WorktreeFacts): Promise<boolean> {
  const headLog = await gitText(git, { cwd: worktree.path, args: ['rev-list', '--walk-reflogs', 'HEAD'] });
  const visited = [...new Set(headLog.split('\n').filter((line) => line.length > 0))];
  if (visited.length === 0) return false;
  // --all holds every branch, tag and stash, and every other worktree's HEAD: whatever outlives this worktree.
  const count = await gitText(git, {
    cwd: worktree.path,
    args: ['rev-list', '--count', ...visited, '--not', '--all', worktree.baseCommit],
  });
  return Number.parseInt(count, 10) > 0;
}

/** Removes the worktree and its branch; true when git kept the branch, checked out in another folder. */
async function removeWorktree(git: GitContext, worktree: WorktreeFacts): Promise<boolean> {
  const repository = worktree.repository;
  // A folder deleted by hand leaves a registration behind: dropped too, so `git worktree list` stays true.
  await unregisterWorktree(git, repository, worktree.path);
  if (!(await branchExists(git, repository, worktree.branch))) return false;
  const deleteBranch = { cwd: repository, args: ['branch', '-D', worktree.branch] };
  const deleted = await runGitRetryingLocks(git, deleteBranch);
  if (deleted.exitCode === 0) return false;
  // Someone checked the branch out elsewhere since: it is theirs now, and git rightly keeps it.
  if (/checked out at|used by worktree/i.test(deleted.stderr)) return true;
  throw gitFailed(deleteBranch, deleted);
}
