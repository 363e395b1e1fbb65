import { isDeepStrictEqual } from 'node:util';
import type { StoredReceipt } from '@tether/runtime';
import type { Pool } from 'pg';
import type { SessionAppend } from './append-check.js';
import { receiptFromRow } from './record-rows.js';
import { leaseStatements } from './lease-statements.js';
import { statements } from './store-statements.js';

type Outcome = 'committed' | 'not_committed' | 'unknown';

/** Who holds the sessions a unit appended to, as the unit's fencing check saw it (owner and tokens). */
export interface UnitFence {
  readonly ownerId: string;
  readonly tokens: ReadonlyMap<string, number>;
}

/**
 * Whether a unit whose answer to COMMIT was lost was stored, read from the heads of the sessions it
 * appended to (only this store writes them while it holds their leases): all at or past the unit's
 * last seqs, it was; all still just before its first ones, it was not. Heads past the unit count as
 * this store's only while it still holds every such session with the token the unit was fenced
 * with: a runtime that took a session over meanwhile (this store's connection down past the lease)
 * may have written those seqs itself, so the outcome is unknown then. A unit that appends nothing
 * is read from its receipts, each written once: all stored as the unit carries them, it was;
 * otherwise it is taken as not stored (run again, it is refused receipt_exists if another runtime
 * stored one of them meanwhile). Without receipts either, its upserts give the same rows when it is
 * written again.
 */
export async function commitOutcome(
  pool: Pool,
  appends: readonly SessionAppend[],
  receipts: readonly StoredReceipt[] = [],
  fence?: UnitFence,
): Promise<Outcome> {
  if (appends.length === 0) return receiptsStored(pool, receipts);
  const { rows } = await pool.query<{ session_id: string; last_seq: string }>(
    'SELECT session_id, last_seq FROM event_heads WHERE session_id = ANY($1::text[])',
    [appends.map((append) => append.sessionId)],
  );
  const heads = new Map(rows.map((row) => [row.session_id, Number(row.last_seq)]));
  const headOf = (sessionId: string) => heads.get(sessionId) ?? 0;
  if (appends.every((append) => headOf(append.sessionId) >= append.lastSeq)) {
    return fence === undefined || (await stillHeld(pool, appends, fence)) ? 'committed' : 'unknown';
  }
  if (appends.every((append) => headOf(append.sessionId) === append.firstSeq - 1)) return 'not_committed';
  return 'unknown';
}

async function stillHeld(pool: Pool, appends: readonly SessionAppend[], fence: UnitFence): Promise<boolean> {
  const { rows } = await pool.query<{ session_id: string; owner_id: string; token: string }>(
    leaseStatements.selectLeases,
    [appends.map((append) => append.sessionId)],
  );
  const leases = new Map(rows.map((row) => [row.session_id, row]));
  return appends.every((append) => {
    const lease = leases.get(append.sessionId);
    const token = fence.tokens.get(append.sessionId);
    return (
      lease !== undefined && lease.owner_id === fence.ownerId && token !== undefined && Number(lease.token) === token
    );
  });
}

async function receiptsStored(pool: Pool, receipts: readonly StoredReceipt[]): Promise<Outcome> {
  if (receipts.length === 0) return 'not_committed';
  const { rows } = await pool.query(statements.selectReceipts, [receipts.map((receipt) => receipt.commandId)]);
  const stored = new Map(rows.map((row) => receiptFromRow(row)).map((receipt) => [receipt.commandId, receipt]));
  return receipts.every((receipt) => isDeepStrictEqual(stored.get(receipt.commandId), receipt))
    ? 'committed'
    : 'not_committed';
}
