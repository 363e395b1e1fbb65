import type { Server } from 'node:http';

/** The requests a server is answering now: at shutdown, their answers go out before the connections close. */
export interface RequestsInFlight {
  /** Resolves once none is left, or after `timeoutMs` whatever is still open. */
  settled(timeoutMs: number): Promise<void>;
}

/**
 * Counts the server's requests until their responses close. A shutdown that closed every connection
 * as soon as the runtime had stopped cut off the answer of a command the stop had just refused (a
 * session opening in a worktree: 503 runtime_stopped, "not applied"), and its client could only say
 * the answer was lost, "may or may not have been applied".
 */
export function trackRequestsInFlight(server: Server): RequestsInFlight {
  let active = 0;
  const waiters = new Set<() => void>();
  server.on('request', (_request, response) => {
    active += 1;
    response.once('close', () => {
      active -= 1;
      if (active > 0) return;
      for (const waiter of waiters) waiter();
      waiters.clear();
    });
  });
  return {
    settled(timeoutMs) {
      if (active === 0) return Promise.resolve();
      return new Promise((resolve) => {
        const timer = setTimeout(() => {
          waiters.delete(done);
          resolve();
        }, timeoutMs);
        const done = () => {
          clearTimeout(timer);
          resolve();
        };
        waiters.add(done);
      });
    },
  };
}
