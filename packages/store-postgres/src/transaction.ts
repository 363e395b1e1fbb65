import type { Pool, PoolClient } from 'pg';
import { isConnectionLoss } from './connection-retry.js';
import { storeFailure } from './store-failure.js';

/**
 * COMMIT sent, and the connection lost before the answer (or ended by the server while it
 * committed): the server may have committed or not. A refusal the server decided (a failed check at
 * commit) did roll back, and is reported as any other.
 */
async function commitOrReport(client: PoolClient): Promise<void> {
  try {
    await client.query('COMMIT');
  } catch (error) {
    if (!isConnectionLoss(error)) throw error;
    throw storeFailure(
      'The connection to the database broke while the change was being committed, so it may or may not have been written. Read it back before retrying.',
      'commit_outcome_unknown',
      error,
    );
  }
}

/** Runs `work` on one pooled connection inside one transaction; anything thrown rolls it all back. */
export async function inTransaction<Result>(
  pool: Pool,
  work: (client: PoolClient) => Promise<Result>,
): Promise<Result> {
  const client = await pool.connect();
  // A checked-out connection that breaks emits 'error' (the pool listens only while it is idle):
  // unheard, that would end the process. The statement in flight rejects as well, which is what
  // the caller reports; the connection is then released destroyed, not back to the pool.
  let broken: Error | undefined;
  const onError = (error: Error) => {
    broken = error;
  };
  client.on('error', onError);
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await commitOrReport(client);
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch((rollbackError: unknown) => {
      broken ??= rollbackError instanceof Error ? rollbackError : new Error('The rollback failed.');
    });
    throw error;
  } finally {
    client.removeListener('error', onError);
    client.release(broken);
  }
}
