import { rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { newSessionId } from '@tether/protocol';
import { SessionDiff } from '@tether/protocol';
import { describe, expect, it } from 'vitest';
import { type GitPlayground, agentErrorOf, gitPlayground, writeFiles } from './git-repository.test-helper.js';

/** A worktree holding every kind of work: a commit on its branch, an uncommitted edit, an untracked text file and an untracked binary. */
async function worktreeWithWork(playground: GitPlayground) {
  const prepared = await playground.prepare({ branch: 'feature/diff' });
  await playground.commitFile(prepared.directory, 'committed.txt', 'made in a commit\n');
  await writeFiles(prepared.directory, {
    'src/app.txt': 'one\nTWO\nthree\n',
    'untracked.txt': 'not added anywhere\n',
    'image.bin': Buffer.from([0, 1, 2, 3, 0, 255]),
  });
  await rm(path.join(prepared.directory, 'notes/old.txt'));
  return prepared;
}

describe('diff', () => {
  it('shows committed, uncommitted and untracked work against the base commit, naming binary files', async () => {
    const playground = await gitPlayground();
    const prepared = await worktreeWithWork(playground);
    const sessionId = newSessionId();

    const diff = await playground.acquirer.diff?.(prepared, { sessionId, maxBytes: 1_000_000 });

    expect(SessionDiff.parse(diff)).toEqual(diff);
    expect(diff).toMatchObject({
      sessionId,
      baseCommit: prepared.worktree?.baseCommit,
      branch: 'feature/diff',
      truncated: false,
      files: [
        { path: 'committed.txt', status: 'added', added: 1, removed: 0, binary: false },
        { path: 'image.bin', status: 'added', added: null, removed: null, binary: true },
        { path: 'notes/old.txt', status: 'deleted', added: 0, removed: 1, binary: false },
        { path: 'src/app.txt', status: 'modified', added: 1, removed: 1, binary: false },
        { path: 'untracked.txt', status: 'added', added: 1, removed: 0, binary: false },
      ],
    });
    expect(diff?.diff).toContain('diff --git a/committed.txt b/committed.txt\nnew file mode 100644');
    expect(diff?.diff).toContain('+made in a commit\n');
    expect(diff?.diff).toContain('-two\n+TWO\n');
    expect(diff?.diff).toContain('+not added anywhere\n');
    expect(diff?.diff).toContain('-to be deleted\n');
    expect(diff?.diff).toContain('Binary files /dev/null and b/image.bin differ\n');
    // The user's own view is untouched: the uncommitted edit is still unstaged, the new file still untracked.
    expect(playground.git(prepared.directory, 'status', '--porcelain', '--untracked-files=all')).toBe(
      ' D notes/old.txt\n M src/app.txt\n?? image.bin\n?? untracked.txt\n',
    );
  });

  it('names a file whose changes are not UTF-8 as git names a binary file, never with its bytes replaced', async () => {
    const playground = await gitPlayground();
    const prepared = await playground.prepare({ branch: 'feature/latin1' });
    // "café" in Latin-1: é is the single byte 0xE9, which is not UTF-8.
    await writeFiles(prepared.directory, {
      'latin1.txt': Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]),
      'utf8.txt': 'café\n',
    });

    const diff = await playground.acquirer.diff?.(prepared, { sessionId: newSessionId(), maxBytes: 1_000_000 });

    expect(diff?.files).toEqual([
      { path: 'latin1.txt', status: 'added', added: 1, removed: 0, binary: false },
      { path: 'utf8.txt', status: 'added', added: 1, removed: 0, binary: false },
    ]);
    expect(diff?.diff).not.toContain('\uFFFD');
    expect(diff?.diff).toMatch(
      /^diff --git a\/latin1\.txt b\/latin1\.txt\nnew file mode 100644\nindex 0+\.\.[0-9a-f]+\nBinary files \/dev\/null and b\/latin1\.txt differ\ndiff --git a\/utf8\.txt b\/utf8\.txt\n/,
    );
    expect(diff?.diff).toContain('+café\n');
  });

  it('cuts the diff at maxBytes at a line end, says so, and still lists every file', async () => {
    const playground = await gitPlayground();
    const prepared = await worktreeWithWork(playground);
    const whole = await playground.acquirer.diff?.(prepared, { sessionId: newSessionId(), maxBytes: 1_000_000 });

    const cut = await playground.acquirer.diff?.(prepared, { sessionId: newSessionId(), maxBytes: 300 });

    expect(cut?.truncated).toBe(true);
    expect(Buffer.byteLength(cut?.diff ?? '')).toBeLessThanOrEqual(300);
    expect(cut?.diff.length).toBeGreaterThan(0);
    expect(cut?.diff.endsWith('\n')).toBe(true);
    expect(whole?.diff.startsWith(cut?.diff ?? '-')).toBe(true);
    expect(cut?.files).toEqual(whole?.files);
    const none = await playground.acquirer.diff?.(prepared, { sessionId: newSessionId(), maxBytes: 0 });
    expect(none).toMatchObject({ diff: '', truncated: true, files: whole?.files });
  });

  it('is empty for a worktree with no work, and still shows the committed work once the folder is deleted', async () => {
    const playground = await gitPlayground();
    const clean = await playground.prepare();
    expect(await playground.acquirer.diff?.(clean, { sessionId: newSessionId(), maxBytes: 1000 })).toMatchObject({
      files: [],
      diff: '',
      truncated: false,
    });

    const prepared = await worktreeWithWork(playground);
    await rm(prepared.directory, { recursive: true, force: true });
    const diff = await playground.acquirer.diff?.(prepared, { sessionId: newSessionId(), maxBytes: 100_000 });
    expect(diff?.files.map((file) => file.path)).toEqual(['committed.txt']);
  });

  it('refuses, saying why, for a worktree folder that is there but no longer a worktree (its .git removed), rather than show nothing changed', async () => {
    const playground = await gitPlayground();
    const prepared = await worktreeWithWork(playground);
    await rm(path.join(prepared.directory, '.git'));
    const refused = await agentErrorOf(
      playground.acquirer.diff!(prepared, { sessionId: newSessionId(), maxBytes: 100_000 }),
    );
    expect(refused).toMatchObject({ code: 'invalid_workspace', details: { reason: 'worktree_broken' } });
    expect(refused.message).toContain(prepared.directory);
  });

  it('refuses, naming the repository, when the repository was moved away (the worktree itself intact); works again once repaired', async () => {
    const playground = await gitPlayground();
    const prepared = await worktreeWithWork(playground);
    const moved = path.join(playground.folder, 'moved-repository');
    await rename(playground.repository, moved);
    const refused = await agentErrorOf(
      playground.acquirer.diff!(prepared, { sessionId: newSessionId(), maxBytes: 100_000 }),
    );
    expect(refused).toMatchObject({ code: 'invalid_workspace', details: { reason: 'not_a_git_repository' } });
    expect(refused.message).toContain(`repository ${playground.repository} is gone`);
    expect(refused.message).not.toContain('.git was removed');
    // What the message says to do is enough: the session's whole work reads again.
    playground.git(moved, 'worktree', 'repair', prepared.directory);
    const diff = await playground.acquirer.diff!(prepared, { sessionId: newSessionId(), maxBytes: 100_000 });
    expect(diff.files.map((file) => file.path)).toContain('committed.txt');
    expect(diff.files.map((file) => file.path)).toContain('untracked.txt');
  });

  it('counts the changed files in the status a release keeps', async () => {
    const playground = await gitPlayground();
    const prepared = await worktreeWithWork(playground);
    await writeFile(path.join(prepared.directory, 'another.txt'), 'one more\n');
    const kept = await playground.acquirer.release(prepared, { discardChanges: false, inUse: false });
    expect(kept).toMatchObject({ state: 'kept', keptBecause: 'uncommitted_changes', changedFiles: 6 });
  });
});
