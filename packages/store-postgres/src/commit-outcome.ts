import type { Pool } from 'pg';
import type { SessionAppend } from './append-check.js';

type Outcome = 'committed' | 'not_committed' | 'unknown';

/**
 * Whether a unit whose answer to COMMIT was lost was stored, read from the heads of the sessions it
 * appended to (only this store writes them while it holds their leases): all at or past the unit's
 * last seqs, it was; all still just before its first ones, it was not. A unit that appends nothing
 * is taken as not stored: its upserts give the same rows when it is written again.
 */
export async function commitOutcome(pool: Pool, appends: readonly SessionAppend[]): Promise<Outcome> {
  if (appends.length === 0) return 'not_committed';
  const { rows } = await pool.query<{ session_id: string; last_seq: string }>(
    'SELECT session_id, last_seq FROM event_heads WHERE session_id = ANY($1::text[])',
    [appends.map((append) => append.sessionId)],
  );
  const heads = new Map(rows.map((row) => [row.session_id, Number(row.last_seq)]));
  const headOf = (sessionId: string) => heads.get(sessionId) ?? 0;
  if (appends.every((append) => headOf(append.sessionId) >= append.lastSeq)) return 'committed';
  if (appends.every((append) => headOf(append.sessionId) === append.firstSeq - 1)) return 'not_committed';
  return 'unknown';
}
