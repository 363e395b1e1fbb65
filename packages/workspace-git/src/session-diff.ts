import { isUtf8 } from 'node:buffer';
import { AgentError, type ChangedFile, type SessionDiff, type WorktreeFacts } from '@tether/protocol';
import { changedFilesBetween } from './changed-files.js';
import { branchExists } from './git-refs.js';
import { type GitContext, gitFailed, runGit } from './run-git.js';
import { isDirectory, isRepository, reachableRepository, worktreePresent } from './worktree-presence.js';
import { snapshotWorktree } from './worktree-snapshot.js';
import { repositoryGone } from './workspace-refusal.js';

/** SessionDiff.files holds at most this many (its schema's bound); moreFiles counts the rest. */
const maxListedFiles = 100_000;

/**
 * What holds the session's work now: the worktree's snapshot (commits, uncommitted and untracked work alike);
 * its branch when the folder is gone (the committed work survives); the base itself when both are gone.
 */
async function currentWork(git: GitContext, worktree: WorktreeFacts): Promise<{ cwd: string; tree: string }> {
  if (await worktreePresent(git, worktree.path)) {
    return { cwd: worktree.path, tree: await snapshotWorktree(git, worktree.path) };
  }
  if (await branchExists(git, worktree.repository, worktree.branch)) {
    return { cwd: worktree.repository, tree: `refs/heads/${worktree.branch}` };
  }
  return { cwd: worktree.repository, tree: worktree.baseCommit };
}

/** Every file that differs from the base commit (WorkspaceStatus.changedFiles counts them). */
export async function changedFilesAgainstBase(git: GitContext, worktree: WorktreeFacts): Promise<ChangedFile[]> {
  const work = await currentWork(git, worktree);
  return changedFilesBetween(git, work.cwd, worktree.baseCommit, work.tree);
}

/**
 * The session's whole work against its base commit as git's unified diff, cut at `maxBytes` (at a line
 * end, so no line or character is split). Binary files are named ("Binary files … differ"), not shown.
 */
export async function sessionDiff(
  git: GitContext,
  worktree: WorktreeFacts,
  options: { readonly sessionId: string; readonly maxBytes: number },
): Promise<SessionDiff> {
  // There, but no worktree any more (its .git removed or replaced): its files may hold work git cannot
  // read now, and the branch alone would show nothing changed. (A close keeps such a folder as before.)
  if (!(await worktreePresent(git, worktree.path)) && (await isDirectory(worktree.path))) {
    // Its .git is as it was, but the repository it points into was moved or deleted: that is what to put right.
    if (!(await isRepository(git, await reachableRepository(git, worktree))))
      throw repositoryGone(
        worktree,
        `git cannot read its worktree ${worktree.path}, whose files are as they were left`,
      );
    throw new AgentError({
      code: 'invalid_workspace',
      message: `The session's worktree folder ${worktree.path} is there but is no longer a git worktree git can read (its .git was removed or replaced, or its configuration is broken: git status run in it says why), so git cannot tell what changed in it. Its files are as they were left: copy out what you need, then repair it (git worktree repair ${worktree.path}, run in the repository) or delete the session with its changes discarded.`,
      details: { reason: 'worktree_broken' },
    });
  }
  const work = await currentWork(git, worktree);
  const files = await changedFilesBetween(git, work.cwd, worktree.baseCommit, work.tree);
  const summary = {
    sessionId: options.sessionId,
    baseCommit: worktree.baseCommit,
    branch: worktree.branch,
    files: files.slice(0, maxListedFiles),
    ...(files.length > maxListedFiles ? { moreFiles: files.length - maxListedFiles } : {}),
  };
  if (files.length === 0 || options.maxBytes <= 0) return { ...summary, diff: '', truncated: files.length > 0 };
  const call = {
    cwd: work.cwd,
    args: [
      'diff-tree',
      '-r',
      '-p',
      '-M',
      '--no-color',
      '--no-ext-diff',
      '--no-textconv',
      worktree.baseCommit,
      work.tree,
    ],
    maxOutputBytes: options.maxBytes,
    cutOutput: true,
  };
  const patch = await runGit(git, call);
  if (patch.exitCode !== 0) throw gitFailed(call, patch);
  if (!patch.cut) return { ...summary, diff: patchText(patch.stdout), truncated: false };
  const lastLineEnd = patch.stdout.lastIndexOf(0x0a);
  return { ...summary, diff: patchText(patch.stdout.subarray(0, lastLineEnd + 1)), truncated: true };
}

const fileHeader = Buffer.from('diff --git ');

/**
 * The patch as text. A file whose changes are not UTF-8 (a Latin-1 source, say) is named as git names
 * a binary file, its header kept: decoded, its bytes would be replaced, and a host applying the patch
 * would write something else than the agent did. Its line counts stay in the file list.
 */
function patchText(patch: Buffer): string {
  if (isUtf8(patch)) return patch.toString('utf8');
  const sections: string[] = [];
  let start = 0;
  while (start < patch.length) {
    let next = patch.indexOf(fileHeader, start + 1);
    while (next !== -1 && patch[next - 1] !== 0x0a) next = patch.indexOf(fileHeader, next + 1);
    const end = next === -1 ? patch.length : next;
    const section = patch.subarray(start, end);
    sections.push(isUtf8(section) ? section.toString('utf8') : notShown(section));
    start = end;
  }
  return sections.join('');
}

/** A file's section without its hunks: its header (git quotes names that are not plain), then one binary line. */
function notShown(section: Buffer): string {
  const lines = section.toString('latin1').split('\n');
  const from = lines.find((line) => line.startsWith('--- '))?.slice(4);
  const to = lines.find((line) => line.startsWith('+++ '))?.slice(4);
  const hunks = lines.findIndex((line) => line.startsWith('--- ') || line.startsWith('@@'));
  const header = (hunks === -1 ? lines : lines.slice(0, hunks)).filter((line) => line !== '');
  return `${header.join('\n')}\nBinary files ${from ?? '/dev/null'} and ${to ?? '/dev/null'} differ\n`;
}
