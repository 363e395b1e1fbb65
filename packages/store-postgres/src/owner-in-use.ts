import type { Pool } from 'pg';
import { leaseStatements } from './lease-statements.js';
import { storeFailure } from './store-failure.js';

interface OwnRuntimeRow {
  readonly address: string | null;
  /** The last heartbeat, in seconds since the epoch by the database's clock, as text. */
  readonly beat: string;
  readonly lease_ttl_ms: number;
  readonly alive: boolean;
}

async function ownRuntime(pool: Pool, ownerId: string): Promise<OwnRuntimeRow | undefined> {
  return (await pool.query<OwnRuntimeRow>(leaseStatements.selectOwnRuntime, [ownerId])).rows[0];
}

function ownerIdInUse(ownerId: string, address: string | null, target: string) {
  return storeFailure(
    `Another Tether process is running with this store owner id (${ownerId}) on ${target}${address ? `, at ${address}` : ''}: it renewed its heartbeat while this one was starting. Two processes with one owner id would take each other's sessions and give their leases away. Give each daemon its own data dir; if this data dir was copied from another daemon's, delete the store-owner-id file in it (a new id is made at the next start), then start again.`,
    'owner_id_in_use',
  );
}

/**
 * Refuses to start a runtime beside another live process with the same owner id (a data dir copied
 * with its store-owner-id). Before this runtime writes its row: a row that is missing or lapsed
 * belongs to nobody alive, and this runtime goes on at once. A fresh one is either a predecessor
 * that just died (a crash, then a restart within the ttl) or a live twin: the row is watched until it
 * lapses, or for two of its holder's heartbeat intervals. Renewed meanwhile (nothing of this process
 * renews it yet), it is a twin: store_failure, reason owner_id_in_use, nothing written. Not renewed,
 * its holder is gone, and this runtime takes over as its successor. A twin stalled for the whole
 * watch is not told apart from a dead predecessor.
 */
export async function refuseLiveTwin(
  pool: Pool,
  ownerId: string,
  target: string,
  onWait: (waitMs: number) => void = () => undefined,
): Promise<void> {
  const first = await ownRuntime(pool, ownerId);
  if (first === undefined || !first.alive) return;
  const beatMs = Math.max(1, Math.floor(first.lease_ttl_ms / 3));
  const pollMs = Math.min(250, Math.max(10, Math.floor(beatMs / 10)));
  // The predecessor's ttl sets the watch, not this runtime's: up to 2/3 of it (40 min for a ttl of an hour).
  onWait(2 * beatMs + pollMs);
  const until = performance.now() + 2 * beatMs + pollMs;
  while (performance.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, pollMs));
    const now = await ownRuntime(pool, ownerId);
    if (now === undefined || !now.alive) return;
    if (now.beat !== first.beat) throw ownerIdInUse(ownerId, now.address, target);
  }
}
