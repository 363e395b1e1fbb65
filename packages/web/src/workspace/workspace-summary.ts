import { type ChangedFile, type WorkspaceStatus, keptBecauseWords, worktreeAfterDelete } from '@tether/protocol';

/** A worktree session's workspace as the header and the list show it. */
export interface WorktreeSummary {
  readonly repository: string;
  readonly branch: string;
  /** The worktree's folder. */
  readonly path: string;
  /** "3 changed files", "no changes"; null when not known yet. */
  readonly changes: string | null;
  /** What became of it once the session released it (where it was kept, and why); null while in use. */
  readonly release: string | null;
}

export function changedFilesLabel(count: number | null): string | null {
  if (count === null) return null;
  if (count === 0) return 'no changes';
  return count === 1 ? '1 changed file' : `${count} changed files`;
}

/** Null for a workspace that is not a worktree (a plain directory), or not known yet. */
export function summarizeWorktree(status: WorkspaceStatus | null): WorktreeSummary | null {
  const worktree = status?.worktree;
  if (status == null || worktree == null) return null;
  const release =
    status.state === 'kept'
      ? `Worktree kept at ${worktree.path} on branch ${worktree.branch}${
          status.keptBecause === null ? '' : `: ${keptBecauseWords[status.keptBecause]}`
        }.`
      : status.state === 'removed'
        ? `Worktree and branch ${worktree.branch} removed: nothing in them was changed.`
        : null;
  return {
    repository: worktree.repository,
    branch: worktree.branch,
    path: worktree.path,
    changes: changedFilesLabel(status.changedFiles),
    release,
  };
}

/**
 * Where the session's kept worktree is and what work in it deleting the session would lose; null when
 * none: one another session uses, or whose branch another checkout holds, stays whatever the delete says.
 */
export function keptWork(status: WorkspaceStatus | null): string | null {
  if (
    status?.state !== 'kept' ||
    status.keptBecause === 'in_use' ||
    status.keptBecause === 'checked_out_elsewhere' ||
    status.keptBecause === null
  )
    return null;
  return summarizeWorktree(status)?.release ?? null;
}

/** "+12 −3", or "binary" when git counts no lines. */
export function formatLineCounts(file: ChangedFile): string {
  if (file.binary || file.added === null || file.removed === null) return 'binary';
  return `+${file.added} −${file.removed}`;
}

/** The file's path, with where it came from for a rename. */
export function changedFileName(file: ChangedFile): string {
  return file.previousPath === undefined ? file.path : `${file.previousPath} → ${file.path}`;
}

/** What the list says once a session was deleted here: whether its worktree went with it, or stayed and why. */
export function afterDeleteNotice(before: WorkspaceStatus | null, after: WorkspaceStatus | null): string {
  return `Session deleted${worktreeAfterDelete(before, after)}.`;
}
