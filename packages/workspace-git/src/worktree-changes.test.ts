import { readFile, rm, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { newSessionId } from '@tether/protocol';
import { describe, expect, it } from 'vitest';
import { gitPlayground, writeFiles } from './git-repository.test-helper.js';

/** Bytes git takes for binary: a NUL among them. */
const binaryContent = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01, 0x02, 0x03, 0x00, 0xff]);

describe('baseline and changedSince', () => {
  it("lists what a run added, modified, deleted and renamed, with line counts, and never touches the user's index", async () => {
    const playground = await gitPlayground();
    const prepared = await playground.prepare();
    const worktree = prepared.directory;
    // Something staged by the user before the run: the snapshot must leave it staged, and only it.
    await writeFile(path.join(worktree, 'README.md'), 'hello\nstaged line\n');
    playground.git(worktree, 'add', 'README.md');
    const stagedBefore = playground.git(worktree, 'diff', '--cached');
    const indexBefore = await readFile(
      path.join(playground.repository, '.git', 'worktrees', path.basename(worktree), 'index'),
    );

    const baseline = await playground.acquirer.baseline?.(prepared);
    if (baseline === undefined) throw new Error('the git acquirer takes baselines');

    await writeFiles(worktree, {
      'docs/new.md': 'first\nsecond\nthird\n',
      'src/app.txt': 'one\n2\nthree\nfour\n',
      'image.bin': binaryContent,
      'build/output.txt': 'ignored by .gitignore\n',
    });
    await rm(path.join(worktree, 'notes/old.txt'));
    const changes = await playground.acquirer.changedSince?.(prepared, baseline, { limit: 1000 });

    expect(changes).toEqual({
      files: [
        { path: 'docs/new.md', status: 'added', added: 3, removed: 0, binary: false },
        { path: 'image.bin', status: 'added', added: null, removed: null, binary: true },
        { path: 'notes/old.txt', status: 'deleted', added: 0, removed: 1, binary: false },
        { path: 'src/app.txt', status: 'modified', added: 2, removed: 1, binary: false },
      ],
      truncated: false,
    });
    expect(
      await readFile(path.join(playground.repository, '.git', 'worktrees', path.basename(worktree), 'index')),
    ).toEqual(indexBefore);
    expect(playground.git(worktree, 'diff', '--cached')).toBe(stagedBefore);
    expect(playground.git(worktree, 'status', '--porcelain', '--untracked-files=all')).toContain('?? docs/new.md');
  });

  it('sees a rename as one renamed file, and a run that changed nothing as no file', async () => {
    const playground = await gitPlayground({
      files: { 'long.txt': Array.from({ length: 20 }, (_, line) => `line ${line}\n`).join('') },
    });
    const prepared = await playground.prepare();
    const quiet = await playground.acquirer.baseline?.(prepared);
    expect(await playground.acquirer.changedSince?.(prepared, quiet ?? '', { limit: 10 })).toEqual({
      files: [],
      truncated: false,
    });

    const baseline = await playground.acquirer.baseline?.(prepared);
    playground.git(prepared.directory, 'mv', 'long.txt', 'moved.txt');
    await writeFile(
      path.join(prepared.directory, 'moved.txt'),
      `${await readFile(path.join(prepared.directory, 'moved.txt'), 'utf8')}one more\n`,
    );
    const changes = await playground.acquirer.changedSince?.(prepared, baseline ?? '', { limit: 10 });

    expect(changes?.files).toEqual([
      { path: 'moved.txt', previousPath: 'long.txt', status: 'renamed', added: 1, removed: 0, binary: false },
    ]);
  });

  it('counts commits the run made like any other change, and cuts the list at the limit', async () => {
    const playground = await gitPlayground();
    const prepared = await playground.prepare();
    const baseline = await playground.acquirer.baseline?.(prepared);
    await playground.commitFile(prepared.directory, 'a.txt', 'a\n');
    await writeFiles(prepared.directory, { 'b.txt': 'b\n', 'c.txt': 'c\n' });

    const changes = await playground.acquirer.changedSince?.(prepared, baseline ?? '', { limit: 2 });

    expect(changes).toEqual({
      files: [
        { path: 'a.txt', status: 'added', added: 1, removed: 0, binary: false },
        { path: 'b.txt', status: 'added', added: 1, removed: 0, binary: false },
      ],
      truncated: true,
    });
  });

  it('sees an edit git cannot tell from its cached stats (same size, same second as the index was written)', async () => {
    const playground = await gitPlayground();
    // Only size and modification time then tell an edit apart (ctime changes with any edit, so it is not trusted here).
    playground.git(playground.repository, 'config', 'core.trustctime', 'false');
    const prepared = await playground.prepare();
    const file = path.join(prepared.directory, 'src/app.txt');
    const userIndex = path.join(playground.repository, '.git', 'worktrees', path.basename(prepared.directory), 'index');
    // The index caches the file at a whole second in the past, and was itself written in that second: git must
    // look into the file, since a same-size edit in that second would leave the cached stats as they were.
    const second = Math.floor(Date.now() / 1000) - 10;
    await utimes(file, second, second);
    playground.git(prepared.directory, 'update-index', '--refresh');
    await writeFile(file, 'one\nTWO\nthree\n');
    await utimes(file, second, second);
    await utimes(userIndex, second, second);

    const diff = await playground.acquirer.diff?.(prepared, { sessionId: newSessionId(), maxBytes: 10_000 });

    expect(diff?.files).toEqual([{ path: 'src/app.txt', status: 'modified', added: 1, removed: 1, binary: false }]);
    expect(playground.git(prepared.directory, 'status', '--porcelain')).toBe(' M src/app.txt\n');
  });
});
