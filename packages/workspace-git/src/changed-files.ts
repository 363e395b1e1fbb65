import type { ChangedFile } from '@tether/protocol';
import { type GitContext, gitText } from './run-git.js';

/** A list of 100,000 changed files is ~15 MB of raw + numstat output; more than that is refused, not read. */
const maxListingBytes = 64 * 1024 * 1024;

const statusByLetter: Record<string, ChangedFile['status']> = {
  A: 'added',
  M: 'modified',
  D: 'deleted',
  R: 'renamed',
  // A type change (a file became a symlink, say) is a modification to whoever reads the list.
  T: 'modified',
};

interface LineCounts {
  readonly added: number | null;
  readonly removed: number | null;
}

/**
 * The files that differ between two trees (or commits), with git's rename detection and line counts.
 * Plumbing (diff-tree) so the user's diff configuration (external tools, colours, prefixes) never applies.
 */
export async function changedFilesBetween(
  git: GitContext,
  cwd: string,
  from: string,
  to: string,
): Promise<ChangedFile[]> {
  const listing = await gitText(git, {
    cwd,
    args: ['diff-tree', '-r', '-z', '-M', '--raw', '--numstat', from, to],
    maxOutputBytes: maxListingBytes,
  });
  return parseChangedFiles(listing);
}

/**
 * Reads `diff-tree -z --raw --numstat`: first the raw records (`:modes ids STATUS\0path\0`, two paths for a
 * rename), then one numstat record per file in the same order (`added\tremoved\tpath\0`, or
 * `added\tremoved\t\0from\0to\0` for a rename; `-\t-` for a binary file). With -z every path is verbatim.
 */
export function parseChangedFiles(listing: string): ChangedFile[] {
  const tokens = listing.split('\0');
  let index = 0;
  const next = (): string => tokens[index++] ?? '';
  const entries: { status: ChangedFile['status']; path: string; previousPath?: string }[] = [];
  while (index < tokens.length && tokens[index]?.startsWith(':')) {
    const header = next();
    const letter = header.split(' ').at(-1)?.charAt(0) ?? 'M';
    const status = statusByLetter[letter] ?? 'modified';
    if (letter === 'R' || letter === 'C') {
      const previousPath = next();
      entries.push({ status, path: next(), ...(letter === 'R' ? { previousPath } : {}) });
    } else {
      entries.push({ status, path: next() });
    }
  }
  const counts: LineCounts[] = [];
  while (counts.length < entries.length && index < tokens.length) {
    const record = next();
    const firstTab = record.indexOf('\t');
    const secondTab = record.indexOf('\t', firstTab + 1);
    // A rename's paths follow as tokens of their own (the raw record named them already).
    if (secondTab === record.length - 1) index += 2;
    counts.push({
      added: lineCount(record.slice(0, firstTab)),
      removed: lineCount(record.slice(firstTab + 1, secondTab)),
    });
  }
  return entries.map((entry, position) => {
    const count = counts[position] ?? { added: null, removed: null };
    return { ...entry, added: count.added, removed: count.removed, binary: count.added === null };
  });
}

function lineCount(field: string): number | null {
  const count = Number.parseInt(field, 10);
  return Number.isNaN(count) ? null : count;
}
