import { describe, expect, it } from 'vitest';
import { splitUnifiedDiff } from './unified-diff.js';

const diff = [
  'diff --git a/notes.txt b/notes.txt',
  'index 3b18e51..a042389 100644',
  '--- a/notes.txt',
  '+++ b/notes.txt',
  '@@ -1,2 +1,3 @@ heading',
  ' first',
  '-second',
  '+second, changed',
  '+third',
  '@@ -10 +11 @@',
  '-<script>alert(1)</script>',
  '\\ No newline at end of file',
  'diff --git a/logo.png b/logo.png',
  'new file mode 100644',
  'index 0000000..5f2c3a1',
  'Binary files /dev/null and b/logo.png differ',
  'diff --git a/gone.txt b/gone.txt',
  'deleted file mode 100644',
  'index 3b18e51..0000000',
  '--- a/gone.txt',
  '+++ /dev/null',
  '@@ -1 +0,0 @@',
  '-bye',
  'diff --git a/old name.txt b/new name.txt',
  'similarity index 100%',
  'rename from old name.txt',
  'rename to new name.txt',
  '',
].join('\n');

describe('splitting a unified diff', () => {
  it('gives each file its path, its header notes and its hunks, lines marked added, removed, context or note', () => {
    const sections = splitUnifiedDiff(diff);
    expect(sections.map((section) => section.path)).toEqual(['notes.txt', 'logo.png', 'gone.txt', 'new name.txt']);
    const [notes, logo, gone, renamed] = sections;
    expect(notes!.notes).toEqual([]);
    expect(notes!.hunks).toEqual([
      {
        header: '@@ -1,2 +1,3 @@ heading',
        lines: [
          { kind: 'context', text: ' first' },
          { kind: 'removed', text: '-second' },
          { kind: 'added', text: '+second, changed' },
          { kind: 'added', text: '+third' },
        ],
      },
      {
        header: '@@ -10 +11 @@',
        lines: [
          // Markup in a file stays a line of text.
          { kind: 'removed', text: '-<script>alert(1)</script>' },
          { kind: 'note', text: '\\ No newline at end of file' },
        ],
      },
    ]);
    expect(logo).toEqual({
      path: 'logo.png',
      notes: ['new file mode 100644', 'Binary files /dev/null and b/logo.png differ'],
      hunks: [],
    });
    expect(gone!.notes).toEqual(['deleted file mode 100644']);
    expect(gone!.hunks[0]!.lines).toEqual([{ kind: 'removed', text: '-bye' }]);
    expect(renamed!.notes).toEqual(['similarity index 100%', 'rename from old name.txt', 'rename to new name.txt']);
  });

  it('ends early where a cut diff ends, and gives nothing for an empty one', () => {
    const cut = diff.slice(0, diff.indexOf('+third') + 3);
    const sections = splitUnifiedDiff(cut);
    expect(sections).toHaveLength(1);
    expect(sections[0]!.hunks[0]!.lines.at(-1)).toEqual({ kind: 'added', text: '+th' });
    expect(splitUnifiedDiff('')).toEqual([]);
  });

  it('names a file whose header has only the "diff --git" line (a mode change) from that line', () => {
    const sections = splitUnifiedDiff('diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n');
    expect(sections).toEqual([{ path: 'run.sh', notes: ['old mode 100644', 'new mode 100755'], hunks: [] }]);
  });
});
