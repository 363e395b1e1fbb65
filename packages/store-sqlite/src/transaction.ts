import type { DatabaseSync } from 'node:sqlite';

/**
 * Runs `work` in one BEGIN IMMEDIATE transaction: the write lock is taken up front, so the
 * checks made inside cannot be invalidated before the writes; anything thrown rolls it all back.
 */
export function inImmediateTransaction<Result>(database: DatabaseSync, work: () => Result): Result {
  database.exec('BEGIN IMMEDIATE');
  try {
    const result = work();
    database.exec('COMMIT');
    return result;
  } catch (error) {
    if (database.isTransaction) database.exec('ROLLBACK');
    throw error;
  }
}
