import type { Pool, PoolClient } from 'pg';

/** Runs `work` on one pooled connection inside one transaction; anything thrown rolls it all back. */
export async function inTransaction<Result>(pool: Pool, work: (client: PoolClient) => Promise<Result>): Promise<Result> {
  const client = await pool.connect();
  let broken: unknown;
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    // A rollback that fails means the connection is gone: release it destroyed, not back to the pool.
    await client.query('ROLLBACK').catch((rollbackError: unknown) => {
      broken = rollbackError;
    });
    throw error;
  } finally {
    client.release(broken instanceof Error ? broken : undefined);
  }
}
