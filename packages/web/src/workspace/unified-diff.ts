/** One file's part of a unified diff: its header lines (mode, rename, "Binary files … differ"), then its hunks. */
export interface DiffFileSection {
  /** The file's path as the diff names it (the new one; the old one for a deleted file). */
  readonly path: string;
  /** What the header says besides the paths: new/deleted file, mode and rename lines, binary files. */
  readonly notes: readonly string[];
  readonly hunks: readonly DiffHunk[];
}

export interface DiffHunk {
  /** The "@@ -a,b +c,d @@ …" line. */
  readonly header: string;
  readonly lines: readonly DiffLine[];
}

export interface DiffLine {
  readonly kind: 'added' | 'removed' | 'context' | 'note';
  readonly text: string;
}

const lineKinds: Record<string, DiffLine['kind']> = { '+': 'added', '-': 'removed', '\\': 'note' };

/** Header lines that only repeat what the file list and the section title already say. */
const plumbing = /^(diff --git |index |--- |\+\+\+ )/;

function unquote(name: string): string {
  return name.length >= 2 && name.startsWith('"') && name.endsWith('"') ? name.slice(1, -1) : name;
}

function withoutPrefix(name: string, prefix: 'a/' | 'b/'): string {
  const plain = unquote(name);
  return plain.startsWith(prefix) ? plain.slice(prefix.length) : plain;
}

/** The path a file's header names: the new side, else the old one, else the "diff --git" line's. */
function sectionPath(header: readonly string[]): string {
  const newSide = header.find((line) => line.startsWith('+++ '))?.slice(4);
  if (newSide !== undefined && newSide !== '/dev/null') return withoutPrefix(newSide, 'b/');
  const oldSide = header.find((line) => line.startsWith('--- '))?.slice(4);
  if (oldSide !== undefined && oldSide !== '/dev/null') return withoutPrefix(oldSide, 'a/');
  const renamed = header.find((line) => line.startsWith('rename to '));
  if (renamed !== undefined) return unquote(renamed.slice('rename to '.length));
  // "diff --git a/P b/P": without a rename both halves are the same path, so the line splits in the middle.
  const names = header[0]?.slice('diff --git '.length) ?? '';
  const half = (names.length - 1) / 2;
  return Number.isInteger(half) ? withoutPrefix(names.slice(half + 1), 'b/') : names;
}

/**
 * Splits git's unified diff into files and hunks, as text only: nothing in it is ever read as markup.
 * A diff cut at a size limit simply ends early (its last line may be partial).
 */
export function splitUnifiedDiff(diff: string): DiffFileSection[] {
  const sections: DiffFileSection[] = [];
  let header: string[] = [];
  let hunks: { header: string; lines: DiffLine[] }[] = [];
  const finish = () => {
    if (header.length === 0) return;
    sections.push({ path: sectionPath(header), notes: header.filter((line) => !plumbing.test(line)), hunks });
  };
  const lines = diff.split('\n');
  if (lines.at(-1) === '') lines.pop();
  for (const line of lines) {
    if (line.startsWith('diff --git ')) {
      finish();
      header = [line];
      hunks = [];
    } else if (line.startsWith('@@')) {
      hunks.push({ header: line, lines: [] });
    } else if (hunks.length > 0) {
      hunks.at(-1)!.lines.push({ kind: lineKinds[line[0] ?? ''] ?? 'context', text: line });
    } else if (header.length > 0) {
      header.push(line);
    }
  }
  finish();
  return sections;
}
