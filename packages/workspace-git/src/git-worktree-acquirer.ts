import path from 'node:path';
import type { WorktreeFacts } from '@tether/protocol';
import type { PreparedWorkspace, WorkspaceAcquirer } from '@tether/runtime';
import { changedFilesBetween } from './changed-files.js';
import { prepareWorktree } from './prepare-worktree.js';
import { releaseWorktree } from './release-worktree.js';
import { createRepositoryQueue } from './repository-queue.js';
import { restoreWorktree } from './restore-worktree.js';
import { type GitContext, gitEnvironment } from './run-git.js';
import { sessionDiff } from './session-diff.js';
import { snapshotWorktree } from './worktree-snapshot.js';
import { sweepLeftWorktrees } from './sweep-left-worktrees.js';
import { workspaceRefusal } from './workspace-refusal.js';

export interface GitWorktreeAcquirerOptions {
  /** The folder Tether owns for worktrees, one per session (`<root>/<sessionId>`); created 0700. */
  readonly root: string;
  /** The git binary (default: `git` on the environment's PATH). */
  readonly gitPath?: string | undefined;
  /**
   * The environment git starts from (default: this process's). GIT_* variables that would point git at
   * another repository or index are dropped; GIT_TERMINAL_PROMPT=0 and LC_ALL=C are set.
   */
  readonly environment?: Readonly<Record<string, string | undefined>> | undefined;
  /**
   * Who this host is among those that may share the root: the data directory whose lock it holds (one
   * host at a time). Each worktree it begins is recorded under it until made, so that the next host of
   * the same owner takes back (sweep, at its start) what one ended outright half-way left. Without it
   * nothing is recorded or taken back.
   */
  readonly owner?: string | undefined;
}

/** A git command that runs longer than this is stopped: a hung hook or filter must not hold a session forever. */
const gitTimeoutMs = 120_000;

/**
 * Workspaces of kind git_worktree: each session gets its own worktree of the repository on a new branch,
 * so many sessions can work on one repository at once. Why it works as it does:
 * docs/decisions/2026-12-01-workspace-acquirers-and-release.md and 2026-12-01-git-worktree-snapshots-and-concurrency.md.
 */
export function createGitWorktreeAcquirer(options: GitWorktreeAcquirerOptions): WorkspaceAcquirer {
  const root = path.resolve(options.root);
  const stopping = new AbortController();
  const git: GitContext = {
    gitPath: options.gitPath ?? 'git',
    environment: gitEnvironment(options.environment ?? process.env),
    timeoutMs: gitTimeoutMs,
    signal: stopping.signal,
  };
  const queue = createRepositoryQueue();
  const owner = options.owner === undefined ? undefined : path.resolve(options.owner);
  return {
    kind: 'git_worktree',
    prepare: (request) => prepareWorktree(git, queue, root, request, owner),
    restore: (prepared, request) => restoreWorktree(git, queue, prepared, { root, sessionId: request.sessionId }),
    release: (prepared, releaseOptions) => releaseWorktree(git, queue, prepared, releaseOptions),
    baseline: (prepared) => snapshotWorktree(git, worktreeOf(prepared).path),
    changedSince: async (prepared, baseline, { limit }) => {
      const worktree = worktreeOf(prepared);
      const files = await changedFilesBetween(git, worktree.path, baseline, await snapshotWorktree(git, worktree.path));
      return { files: files.slice(0, limit), truncated: files.length > limit };
    },
    diff: (prepared, diffOptions) => sessionDiff(git, worktreeOf(prepared), diffOptions),
    stop: () => stopping.abort(),
    ...(owner === undefined ? {} : { sweep: () => sweepLeftWorktrees(git, queue, root, owner) }),
  };
}

function worktreeOf(prepared: PreparedWorkspace): WorktreeFacts {
  if (prepared.worktree) return prepared.worktree;
  throw workspaceRefusal(
    'unsupported_kind',
    `The git worktree acquirer was handed a ${prepared.kind} workspace with no worktree. Use the acquirer of that kind.`,
  );
}
