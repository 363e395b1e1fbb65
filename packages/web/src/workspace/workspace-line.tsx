import type { WorkspaceStatus } from '@tether/protocol';
import { summarizeWorktree } from './workspace-summary.js';

export interface WorkspaceLineProps {
  readonly status: WorkspaceStatus | null;
  /** Where the session's diff is, and how to go there. */
  readonly diffPath: string;
  readonly onOpenDiff: () => void;
}

/** A worktree session's branch, its changed-file count and the way to its diff; once released, where it was kept. */
export function WorkspaceLine({ status, diffPath, onOpenDiff }: WorkspaceLineProps) {
  const summary = summarizeWorktree(status);
  if (summary === null) return null;
  return (
    <p className="workspace-line">
      <span className="workspace-branch" title={summary.path}>
        Branch {summary.branch}
      </span>
      {summary.changes === null ? null : <span className="workspace-changes">{summary.changes}</span>}
      {status?.state === 'removed' ? null : (
        <a
          href={diffPath}
          onClick={(event) => {
            if (event.metaKey || event.ctrlKey || event.shiftKey || event.button !== 0) return;
            event.preventDefault();
            onOpenDiff();
          }}
        >
          Review changes
        </a>
      )}
      {summary.release === null ? null : <span className="workspace-release">{summary.release}</span>}
    </p>
  );
}
