import { setTimeout as delay } from 'node:timers/promises';
import { type GitCall, type GitContext, type GitResult, runGit } from './run-git.js';

/**
 * What git says when another git process holds a lock it needs: an index, a ref, packed-refs or the config.
 * Those locks are held for milliseconds by well-behaved git, so waiting a little and trying again succeeds.
 */
const lockHeld = /\.lock'?: File exists|could not lock config file [^\n]*: File exists/;

const retryDelaysMs = [20, 40, 80, 160, 320, 640, 1000, 1000, 1000, 1000];

export function heldLock(result: GitResult): boolean {
  return result.exitCode !== 0 && lockHeld.test(result.stderr);
}

/**
 * Runs git, trying again with growing pauses (and some jitter, so ten sessions do not retry in step) while
 * another git process holds a lock the command needs. The last result is answered whatever it is.
 */
export async function runGitRetryingLocks(git: GitContext, call: GitCall): Promise<GitResult> {
  let result = await runGit(git, call);
  for (const pauseMs of retryDelaysMs) {
    if (!heldLock(result)) return result;
    await delay(pauseMs + Math.floor(Math.random() * pauseMs));
    result = await runGit(git, call);
  }
  return result;
}
