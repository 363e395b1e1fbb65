import { type KeyedQueue, createKeyedQueue } from '@tether/runtime';

/**
 * Runs the steps that change a repository's worktree list and branches one at a time per repository.
 * git itself is not safe there: a `worktree add` reads every other worktree's files and fails when it
 * meets one that a concurrent `worktree add` has only half written. Within one Tether that never happens;
 * against other processes the lock retry (git-lock-retry.ts) is what helps.
 */
export type RepositoryQueue = KeyedQueue;

export function createRepositoryQueue(): RepositoryQueue {
  return createKeyedQueue();
}
