import { setTimeout as delay } from 'node:timers/promises';
import { type GitCall, type GitContext, type GitResult, runGit } from './run-git.js';

/**
 * What git says when another git process is in the middle of something: it holds a lock this command needs
 * (an index, a ref, packed-refs, the config), or it is writing or removing a worktree's administrative files
 * while this command reads every worktree's (git dies on a folder that went between its listing and its
 * reading: "Invalid path '…/worktrees/…': No such file or directory"). Well-behaved git finishes those in
 * milliseconds, so waiting a little and trying again succeeds.
 */
const anotherGitAtWork =
  /\.lock'?: File exists|could not lock config file [^\n]*: File exists|failed to read [^\n]*worktrees\/[^\n]*\/(commondir|gitdir)|Invalid path '[^'\n]*\/worktrees\/[^'\n]*': No such file or directory/;

const retryDelaysMs = [20, 40, 80, 160, 320, 640, 1000, 1000, 1000, 1000];

function anotherGitIsAtWork(result: GitResult): boolean {
  return result.exitCode !== 0 && anotherGitAtWork.test(result.stderr);
}

/**
 * Runs git, trying again with growing pauses (and some jitter, so ten sessions do not retry in step) while
 * another git process is at work on the same repository. The last result is answered whatever it is. Only for
 * commands that change nothing when they fail this way (they stop at the lock or the read, before any write).
 */
export async function runGitRetryingLocks(git: GitContext, call: GitCall): Promise<GitResult> {
  let result = await runGit(git, call);
  for (const pauseMs of retryDelaysMs) {
    if (!anotherGitIsAtWork(result)) return result;
    await delay(pauseMs + Math.floor(Math.random() * pauseMs));
    result = await runGit(git, call);
  }
  return result;
}
