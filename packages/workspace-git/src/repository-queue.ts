/**
 * Runs the steps that change a repository's worktree list and branches one at a time per repository.
 * git itself is not safe there: a `worktree add` reads every other worktree's files and fails when it
 * meets one that a concurrent `worktree add` has only half written. Within one Tether that never happens;
 * against other processes the lock retry (git-lock-retry.ts) is what helps.
 */
export type RepositoryQueue = <T>(repository: string, work: () => Promise<T>) => Promise<T>;

export function createRepositoryQueue(): RepositoryQueue {
  const tails = new Map<string, Promise<unknown>>();
  return (repository, work) => {
    const previous = tails.get(repository) ?? Promise.resolve();
    const result = previous.then(work, work);
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    tails.set(repository, tail);
    // The map forgets a repository once its last step is done, so it holds only repositories at work.
    void tail.then(() => {
      if (tails.get(repository) === tail) tails.delete(repository);
    });
    return result;
  };
}
