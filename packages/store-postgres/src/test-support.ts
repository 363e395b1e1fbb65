// @tether/store-postgres/test-support: what tests of runtimes sharing a database need to catch one of
// them at a chosen point. Not for hosts: the boundary test lets only test code import it.
import pg from 'pg';

const waitBoundMs = 10_000;

export interface StopInsideCommitOptions {
  /** The database the runtime writes to. */
  readonly url: string;
  /** The session whose next commit the runtime is caught in. */
  readonly sessionId: string;
  /** Makes the runtime commit to the session, when it would not by itself (a turn streaming does). */
  readonly commit?: () => void;
  /** Stops the runtime's process (SIGSTOP): called while its commit waits inside its transaction. */
  readonly stop: () => void;
}

/**
 * How many transactions wait for a lock `holder`'s transaction holds. Read from pg_locks, not
 * pg_stat_activity: inside a transaction the latter is read once, at its first use, so a connection
 * opened after that (a pool grows under load) would never show up as waiting.
 */
export async function waitingBehind(holder: pg.Client): Promise<number> {
  const { rows } = await holder.query<{ waiting: string }>(
    'SELECT count(*) AS waiting FROM pg_locks WHERE NOT granted AND pg_backend_pid() = ANY(pg_blocking_pids(pid))',
  );
  return Number(rows[0]?.waiting);
}

/**
 * Leaves a runtime stopped inside a commit, holding its session's lease. The session's event head is
 * locked in a transaction of this helper's own, so the runtime's next commit to the session locks
 * the lease FOR SHARE, then waits. Once it waits, `stop` stops the runtime and the head is released:
 * the runtime's transaction goes on to hold the lease, idle, until the server ends it (after the
 * lease ttl: open-postgres-store.ts).
 */
export async function stopInsideCommit({ url, sessionId, commit, stop }: StopInsideCommitOptions): Promise<void> {
  const holder = new pg.Client({ connectionString: url });
  await holder.connect();
  try {
    await holder.query('BEGIN');
    await holder.query('SELECT last_seq FROM event_heads WHERE session_id = $1 FOR UPDATE', [sessionId]);
    commit?.();
    for (const deadline = Date.now() + waitBoundMs; ; ) {
      if ((await waitingBehind(holder)) > 0) break;
      if (Date.now() > deadline)
        throw new Error(`No commit to ${sessionId} waited for its event head within ${waitBoundMs / 1000} s.`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    stop();
    await holder.query('COMMIT');
  } finally {
    // Ended before its COMMIT (a failure), the transaction rolls back and the head is free again.
    await holder.end();
  }
}
