import { copyFile, mkdtemp, rm, stat, utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type GitContext, gitFailed, gitPathOf, gitText, runGit } from './run-git.js';

/**
 * The worktree's whole state as a git tree id: tracked files as they are on disk, untracked ones too,
 * .gitignore respected. Built in a temporary index, so the user's index (what they staged) and their
 * refs are never touched; the only trace is unreferenced objects that git's gc collects.
 */
export async function snapshotWorktree(git: GitContext, worktreePath: string): Promise<string> {
  const userIndex = path.resolve(
    worktreePath,
    gitPathOf(await gitText(git, { cwd: worktreePath, args: ['rev-parse', '--git-path', 'index'] })),
  );
  const folder = await mkdtemp(path.join(tmpdir(), 'tether-snapshot-'));
  try {
    const temporaryIndex = path.join(folder, 'index');
    const environment = { GIT_INDEX_FILE: temporaryIndex };
    // Starting from a copy of the user's index (not `read-tree HEAD`) keeps its cached file stats, so
    // `add -A` hashes only the files that changed instead of every file in the worktree.
    const copied = await copyIndex(userIndex, temporaryIndex);
    if (!copied) await gitText(git, { cwd: worktreePath, args: ['read-tree', 'HEAD'], environment });
    // The copy must stay a plain index: no split index or file-system monitor state shared with the user's.
    const plainIndex = ['-c', 'core.splitIndex=false', '-c', 'core.fsmonitor=false'];
    await addAll(git, worktreePath, [...plainIndex, 'add', '--all'], environment);
    return (await gitText(git, { cwd: worktreePath, args: [...plainIndex, 'write-tree'], environment })).trim();
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

/**
 * A copy of the index that git trusts no more than the original: git re-reads a file whose cached time is not
 * older than the index file itself (it may have changed within the same clock tick), so the copy keeps the
 * original's time, a millisecond earlier to be safe. With the copy's own, newer time, an edit made in the
 * same second as the index was written, and of the same size, would pass for unchanged.
 */
async function copyIndex(userIndex: string, temporaryIndex: string): Promise<boolean> {
  try {
    const original = await stat(userIndex);
    await copyFile(userIndex, temporaryIndex);
    await utimes(temporaryIndex, original.atime, (original.mtimeMs - 1) / 1000);
    return true;
  } catch {
    return false;
  }
}

/** More repositories with no commit than this in one worktree: the snapshot fails as git does. */
const maxRepositoriesLeftOut = 50;

/**
 * `git add --all`, leaving out the repositories inside the worktree that have no commit yet (an agent
 * that ran `git init` for a sub-project): git refuses to add those at all, and would fail the whole
 * snapshot, so that no run's changed files, diff or release check could be read. Their files are not
 * in the snapshot; everything else is.
 */
async function addAll(
  git: GitContext,
  worktreePath: string,
  add: readonly string[],
  environment: Readonly<Record<string, string>>,
): Promise<void> {
  const leftOut: string[] = [];
  for (;;) {
    const excluded = leftOut.map((folder) => `:(exclude,literal)${folder}`);
    const call = {
      cwd: worktreePath,
      args: [...add, ...(excluded.length > 0 ? ['--', '.', ...excluded] : [])],
      environment,
    };
    const result = await runGit(git, call);
    if (result.exitCode === 0) return;
    const empty = [...result.stderr.matchAll(/^error: '(.+)' does not have a commit checked out$/gm)].map(
      (match) => match[1]!,
    );
    const fresh = empty.filter((folder) => !leftOut.includes(folder));
    if (fresh.length === 0 || leftOut.length + fresh.length > maxRepositoriesLeftOut) throw gitFailed(call, result);
    leftOut.push(...fresh);
  }
}
