import type { ChangedFile } from '@tether/protocol';
import type { RunChangedFiles } from '../conversation/conversation-state.js';
import { changedFileName, formatLineCounts } from './workspace-summary.js';

/** Beyond this many files the list starts folded: the turn's answer stays the thing to read. */
const openUpTo = 8;

const statusWords: Record<ChangedFile['status'], string | null> = {
  added: 'new',
  modified: null,
  deleted: 'deleted',
  renamed: 'renamed',
};

/** The files a turn changed, each with its line counts (run.files_changed). */
export function RunChangedFilesView({ changed }: { readonly changed: RunChangedFiles | null }) {
  if (changed === null || changed.files.length === 0) return null;
  const count = changed.files.length;
  return (
    <details className="changed-files" open={count <= openUpTo}>
      <summary>
        Changed {count === 1 ? '1 file' : `${count} files`}
        {changed.truncated ? ' and more (the list was cut)' : ''}
      </summary>
      <ul aria-label="Files this turn changed">
        {changed.files.map((file) => {
          const status = statusWords[file.status];
          return (
            <li key={file.path}>
              <span className="changed-file-path">{changedFileName(file)}</span>
              {status === null ? null : <span className="changed-file-status">{status}</span>}
              <span className="changed-file-counts">{formatLineCounts(file)}</span>
            </li>
          );
        })}
      </ul>
    </details>
  );
}
