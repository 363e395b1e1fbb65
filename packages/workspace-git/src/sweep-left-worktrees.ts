import { realpath, rm } from 'node:fs/promises';
import { undoWorktree } from './prepare-worktree.js';
import type { RepositoryQueue } from './repository-queue.js';
import type { GitContext } from './run-git.js';
import { intentsLeftBy } from './worktree-intents.js';
import { isDirectory } from './worktree-presence.js';

/**
 * At a host's start: takes back the worktrees and branches an earlier host of the same owner began
 * and never finished (it ended outright while git made them), which no session names. One that
 * cannot be taken back now keeps its record, for the next start; the first failure is thrown.
 */
export async function sweepLeftWorktrees(
  git: GitContext,
  queue: RepositoryQueue,
  root: string,
  owner: string,
): Promise<void> {
  let ownRoot: string;
  try {
    ownRoot = await realpath(root);
  } catch {
    // No root yet: no worktree was ever begun here.
    return;
  }
  const failures: unknown[] = [];
  for (const { intent, forget } of await intentsLeftBy(ownRoot, owner)) {
    try {
      if (await isDirectory(intent.repository))
        await queue(intent.repository, () => undoWorktree(git, intent, 'if_unmoved'));
      // The repository went (and its registrations and branches with it): only the folder is left.
      else await rm(intent.worktreePath, { recursive: true, force: true });
      await forget();
    } catch (error) {
      failures.push(error);
    }
  }
  if (failures.length > 0) throw failures[0];
}
