import { existsSync } from 'node:fs';
import { type WorkspaceStatus, keptBecauseWords } from '@tether/protocol';
import { fileNameOnOneLine, plural, terminalSafe } from './human-renderer.js';

/** A worktree session's branch and changed-file count for one line of `tether sessions`; '' for any other workspace. */
export function worktreeColumns(status: WorkspaceStatus | null): string {
  const worktree = status?.worktree;
  if (!status || !worktree) return '';
  const branch = ` · branch ${terminalSafe(worktree.branch)}`;
  if (status.state === 'removed') return `${branch} (worktree removed)`;
  const changed = status.changedFiles === null ? '' : ` · ${plural(status.changedFiles, 'file')} changed`;
  return `${branch}${changed}${status.state === 'kept' ? ' (worktree kept)' : ''}`;
}

/**
 * What became of a worktree, in a sentence a person can act on: where it is and on which branch,
 * or that it was removed; null for a workspace that is not a worktree.
 */
export function describeWorktree(status: WorkspaceStatus | null): string | null {
  const worktree = status?.worktree;
  if (!status || !worktree) return null;
  const where = `${fileNameOnOneLine(worktree.path)} on branch ${terminalSafe(worktree.branch)}`;
  const changed = status.changedFiles === null ? '' : ` (${plural(status.changedFiles, 'file')} changed)`;
  if (status.state === 'removed')
    return `worktree removed with its branch ${terminalSafe(worktree.branch)}: it held no changes (files git ignores, such as build output, are not kept)`;
  // Its folder deleted by hand, the work kept is on its branch alone: pointing at the folder would send them nowhere.
  if (status.state === 'kept' && status.keptBecause === 'commits_beyond_base' && !existsSync(worktree.path))
    return `worktree folder ${fileNameOnOneLine(worktree.path)} is gone; its commits are kept on branch ${terminalSafe(worktree.branch)}${changed} (git log ${worktree.baseCommit.slice(0, 12)}..${terminalSafe(worktree.branch)} lists them)`;
  if (status.state === 'kept' && status.keptBecause === 'checked_out_elsewhere')
    return `worktree folder ${fileNameOnOneLine(worktree.path)} is gone and its branch ${terminalSafe(worktree.branch)} is checked out in another folder (moved with git worktree move, or checked out by hand; git worktree list shows where): Tether leaves both to that checkout`;
  if (status.state === 'kept')
    return `worktree kept at ${where}${changed}: ${status.keptBecause ? keptBecauseWords[status.keptBecause] : 'it holds work'}`;
  return `worktree ${where}${changed}`;
}
