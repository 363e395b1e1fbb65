import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type GitContext, gitText } from './run-git.js';

/**
 * The worktree's whole state as a git tree id: tracked files as they are on disk, untracked ones too,
 * .gitignore respected. Built in a temporary index, so the user's index (what they staged) and their
 * refs are never touched; the only trace is unreferenced objects that git's gc collects.
 */
export async function snapshotWorktree(git: GitContext, worktreePath: string): Promise<string> {
  const userIndex = path.resolve(
    worktreePath,
    (await gitText(git, { cwd: worktreePath, args: ['rev-parse', '--git-path', 'index'] })).trim(),
  );
  const folder = await mkdtemp(path.join(tmpdir(), 'tether-snapshot-'));
  try {
    const temporaryIndex = path.join(folder, 'index');
    const environment = { GIT_INDEX_FILE: temporaryIndex };
    // Starting from a copy of the user's index (not `read-tree HEAD`) keeps its cached file stats, so
    // `add -A` hashes only the files that changed instead of every file in the worktree.
    const copied = await copyFile(userIndex, temporaryIndex).then(
      () => true,
      () => false,
    );
    if (!copied) await gitText(git, { cwd: worktreePath, args: ['read-tree', 'HEAD'], environment });
    // The copy must stay a plain index: no split index or file-system monitor state shared with the user's.
    const plainIndex = ['-c', 'core.splitIndex=false', '-c', 'core.fsmonitor=false'];
    await gitText(git, { cwd: worktreePath, args: [...plainIndex, 'add', '--all'], environment });
    return (await gitText(git, { cwd: worktreePath, args: [...plainIndex, 'write-tree'], environment })).trim();
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}
