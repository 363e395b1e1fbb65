import { rm } from 'node:fs/promises';
import path from 'node:path';
import type { Workspace } from '@tether/protocol';
import type { PreparedWorkspace } from '@tether/runtime';
import { runGitRetryingLocks } from './git-lock-retry.js';
import type { RepositoryQueue } from './repository-queue.js';
import { branchExists, clashingBranch, resolveCommit } from './git-refs.js';
import {
  type GitContext,
  type GitResult,
  gitComplaint,
  gitFailed,
  gitPathOf,
  gitText,
  runGit,
  unstoppable,
} from './run-git.js';
import { isDirectory } from './worktree-presence.js';
import { recordIntent } from './worktree-intents.js';
import { ownedRoot } from './worktree-root.js';
import { unregisterWorktree } from './unregister-worktree.js';
import { workspaceRefusal } from './workspace-refusal.js';

export interface PrepareRequest {
  readonly sessionId: string;
  readonly workspace: Workspace;
}

/**
 * A new worktree of the repository at the base commit, on a new branch, in `<root>/<sessionId>`.
 * Every check runs before anything is made; if making it fails half-way, what was made is taken away.
 */
export async function prepareWorktree(
  git: GitContext,
  queue: RepositoryQueue,
  root: string,
  request: PrepareRequest,
  owner: string | undefined,
): Promise<PreparedWorkspace> {
  const { workspace, sessionId } = request;
  if (workspace.kind !== 'git_worktree') {
    throw workspaceRefusal(
      'unsupported_kind',
      `The git worktree acquirer prepares git_worktree workspaces, not ${workspace.kind}. Register the acquirer for that kind.`,
    );
  }
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(sessionId)) {
    throw workspaceRefusal(
      'invalid_session_id',
      `The session id ${sessionId} cannot name a folder. Use a Tether session id.`,
    );
  }
  const repository = await repositoryTopLevel(git, workspace.repository);
  const baseCommit = await baseCommitOf(git, repository, workspace.baseRef);
  const branch = workspace.branch ?? defaultBranch(sessionId);
  await checkNewBranch(git, repository, branch);
  const ownRoot = await ownedRoot(root);
  const worktreePath = path.join(ownRoot, sessionId);
  if (await isDirectory(worktreePath)) {
    throw workspaceRefusal(
      'worktree_path_taken',
      `The folder ${worktreePath} already exists, so Tether cannot make the session's worktree there. Move it away and retry.`,
    );
  }
  const made = { repository, worktreePath, branch, baseCommit };
  await queue(repository, async () => {
    // Should this host end outright half-way, its next start takes back what was made (sweepLeftWorktrees).
    const forget = owner === undefined ? null : await recordIntent(ownRoot, sessionId, { owner, ...made });
    try {
      await makeWorktree(git, made);
    } finally {
      await forget?.();
    }
  });
  return {
    kind: 'git_worktree',
    directory: worktreePath,
    worktree: { repository, path: worktreePath, branch, baseCommit },
    state: 'ready',
    keptBecause: null,
    changedFiles: 0,
  };
}

/** `tether/` and the first 8 hex digits of the session id's random part: short, and distinct per session. */
function defaultBranch(sessionId: string): string {
  const random = sessionId.replace(/^ses_/, '').replace(/[^A-Za-z0-9]/g, '');
  return `tether/${random.slice(0, 8)}`;
}

async function repositoryTopLevel(git: GitContext, folder: string): Promise<string> {
  if (!path.isAbsolute(folder)) {
    throw workspaceRefusal(
      'not_absolute',
      'The repository path must be absolute. Resolve it (e.g. against your current directory) and try again.',
    );
  }
  if (!(await isDirectory(folder))) {
    throw workspaceRefusal(
      'missing',
      `The repository folder ${folder} does not exist or cannot be read. Pass a git checkout.`,
    );
  }
  const bare = await runGit(git, { cwd: folder, args: ['rev-parse', '--is-bare-repository'] });
  if (bare.exitCode !== 0) throw notARepository(folder, bare);
  if (bare.stdout.toString('utf8').trim() === 'true') {
    throw workspaceRefusal(
      'bare_repository',
      `${folder} is a bare repository: it has no working files to start from. Pass a checkout of it (git clone ${folder}).`,
    );
  }
  const topLevel = await runGit(git, { cwd: folder, args: ['rev-parse', '--show-toplevel'] });
  if (topLevel.exitCode !== 0) throw notARepository(folder, topLevel);
  return gitPathOf(topLevel.stdout);
}

function notARepository(folder: string, result: GitResult): Error {
  // A repository another user owns: git's safe.directory check refuses it (its config could run commands as
  // this user), and "not a repository" would send the user to git init in a folder that is one.
  const dubious = /detected dubious ownership in repository at '(.*)'/.exec(result.stderr);
  if (dubious) {
    return workspaceRefusal(
      'repository_not_trusted',
      `git refuses to work in ${folder}: the repository ${dubious[1]} is owned by another user than the one Tether runs as (git's safe.directory check). If you trust it, run git config --global --add safe.directory ${dubious[1]} as the user that runs Tether, then retry; or pass a checkout of your own.`,
    );
  }
  return workspaceRefusal(
    'not_a_git_repository',
    `${folder} is not in a git working tree (git says: ${gitComplaint(result)}). Pass the folder of a git checkout, or run git init and make a first commit there.`,
  );
}

async function baseCommitOf(git: GitContext, repository: string, baseRef: string | undefined): Promise<string> {
  const ref = baseRef ?? 'HEAD';
  // A ref starting with "-" would be read as an option; the protocol refuses those, this is for other callers.
  const commit = ref.startsWith('-') ? null : await resolveCommit(git, repository, ref);
  if (commit) return commit;
  if (!(await hasAnyCommit(git, repository))) {
    throw workspaceRefusal(
      'unknown_ref',
      `The repository ${repository} has no commits yet, so there is nothing to start a worktree from. Make a first commit and retry.`,
    );
  }
  // The repository has commits, but its checkout is on a branch that has none yet (git switch --orphan).
  if (baseRef === undefined) {
    const head = await runGit(git, { cwd: repository, args: ['symbolic-ref', '--quiet', '--short', 'HEAD'] });
    const branch = head.exitCode === 0 ? head.stdout.toString('utf8').trim() : 'HEAD';
    throw workspaceRefusal(
      'unknown_ref',
      `The repository ${repository} has its checkout on ${branch}, a branch with no commits yet, so its HEAD is nothing to start a worktree from. Pass a branch that has commits as the base (git branch lists them), or make a first commit on ${branch}.`,
    );
  }
  throw workspaceRefusal(
    'unknown_ref',
    `The repository ${repository} has no branch, tag or commit named ${ref}. Pass an existing one as the base (git branch -a lists them).`,
  );
}

async function hasAnyCommit(git: GitContext, repository: string): Promise<boolean> {
  const newest = await gitText(git, { cwd: repository, args: ['rev-list', '--all', '--max-count=1'] });
  return newest.trim().length > 0;
}

async function checkNewBranch(git: GitContext, repository: string, branch: string): Promise<void> {
  // --branch also expands shorthands such as @{-1}; only a name that comes back unchanged is taken as it is.
  const checked = branch.startsWith('-')
    ? null
    : await runGit(git, { cwd: repository, args: ['check-ref-format', '--branch', branch] });
  const valid = checked?.exitCode === 0 && checked.stdout.toString('utf8').trim() === branch;
  if (!valid) {
    throw workspaceRefusal(
      'invalid_branch',
      `${branch} is not a valid branch name (see git check-ref-format). Pick another name, such as tether/my-task.`,
    );
  }
  // A name that clashes with another branch's is found out when git refuses to make it (makeWorktree),
  // nothing made yet: looking for one here would cost every session's opening two more git runs.
  if (await branchExists(git, repository, branch)) throw branchExistsRefusal(repository, branch);
}

function branchExistsRefusal(repository: string, branch: string): Error {
  return workspaceRefusal(
    'branch_exists',
    `The repository ${repository} already has a branch ${branch}. Pick another branch name; or, if that branch holds nothing you need, delete it first (git branch -d ${branch}, which refuses while it holds commits not merged).`,
  );
}

/**
 * branch_exists when `branch` exists, or another branch's name keeps it from being made (a branch
 * `tether` keeps every default `tether/…` name from being made): the message names the branch in the way.
 */
async function branchTakenRefusal(git: GitContext, repository: string, branch: string): Promise<Error | null> {
  if (await branchExists(git, repository, branch)) return branchExistsRefusal(repository, branch);
  const clash = await clashingBranch(git, repository, branch);
  if (clash === null) return null;
  return workspaceRefusal(
    'branch_exists',
    `The repository ${repository} has a branch ${clash}, so git cannot make the branch ${branch} next to it (one name cannot be both a branch and a folder of branches). Pick another branch name, or rename that branch first (git branch -m ${clash} NEW-NAME).`,
  );
}

export interface WorktreeToMake {
  readonly repository: string;
  readonly worktreePath: string;
  readonly branch: string;
  readonly baseCommit: string;
}

/**
 * The branch first, then the worktree on it: made apart, so a failure of the second knows the branch is
 * ours to delete (a `worktree add -b` that fails half-way may or may not have made it).
 */
async function makeWorktree(git: GitContext, made: WorktreeToMake): Promise<void> {
  const { repository, worktreePath, branch, baseCommit } = made;
  const createBranch = { cwd: repository, args: ['branch', '--no-track', branch, baseCommit] };
  const created = await runGitRetryingLocks(git, createBranch);
  if (created.exitCode !== 0) {
    // It appeared since the check (another process), or its name clashes with one (a/b next to a).
    if (/already exists|exists; cannot create/.test(created.stderr)) {
      throw (
        (await branchTakenRefusal(git, repository, branch)) ??
        workspaceRefusal(
          'branch_exists',
          `The repository ${repository} already has a branch ${branch} (or one whose name clashes with it). Pick another branch name (git branch lists them).`,
        )
      );
    }
    throw gitFailed(createBranch, created);
  }
  const addWorktree = { cwd: repository, args: ['worktree', 'add', worktreePath, branch] };
  let added: GitResult;
  try {
    added = await runGitRetryingLocks(git, addWorktree);
  } catch (error) {
    // Stopped by the host's shutdown, or past its time (a hook that waits): what it began goes all the same.
    await undoWorktree(unstoppable(git), made);
    throw error;
  }
  if (added.exitCode === 0) return;
  await undoWorktree(unstoppable(git), made);
  throw gitFailed(addWorktree, added);
}

/**
 * Takes away what a failed `worktree add` left (its folder and registration) and the branch made for
 * it; with `branch: 'if_unmoved'` (what an earlier host left) the branch only while it still points at
 * the base commit: it may have been made by someone else since, or been given work; with `'keep'` (a
 * worktree added back on a branch that was kept) not at all.
 */
export async function undoWorktree(
  git: GitContext,
  made: WorktreeToMake,
  branch: 'delete' | 'if_unmoved' | 'keep' = 'delete',
): Promise<void> {
  // Best effort, as everything here: forced twice, as a `worktree add` stopped half-way leaves it locked ("initializing").
  const unregister = () => unregisterWorktree(git, made.repository, made.worktreePath).catch(() => undefined);
  await unregister();
  await rm(made.worktreePath, { recursive: true, force: true });
  // Its registration, should the folder have gone before git could remove it.
  await unregister();
  if (branch === 'keep') return;
  await runGitRetryingLocks(git, {
    cwd: made.repository,
    args:
      branch === 'delete'
        ? ['branch', '-D', made.branch]
        : ['update-ref', '-d', `refs/heads/${made.branch}`, made.baseCommit],
  });
}
