import type { SessionClaim } from '@tether/runtime';
import type { Pool } from 'pg';
import type { HeldLeases } from './held-leases.js';
import { leaseStatements } from './lease-statements.js';
import { inTransaction } from './transaction.js';

interface ClaimedLease {
  readonly claim: SessionClaim;
  /** The token this store now holds the lease with (undefined when held elsewhere). */
  readonly token?: number;
}

interface LeaseForClaim {
  readonly owner_id: string;
  readonly token: string;
  readonly address: string | null;
  readonly alive: boolean;
}

/** One attempt, in one transaction: undefined when the lease row went away between two statements. */
async function claimOnce(pool: Pool, ownerId: string, sessionId: string): Promise<ClaimedLease | undefined> {
  return inTransaction(pool, async (client) => {
    const inserted = await client.query<{ token: string }>(leaseStatements.insertLease, [ownerId, sessionId]);
    if (inserted.rows[0] !== undefined) return { claim: { status: 'claimed' }, token: Number(inserted.rows[0].token) };
    const { rows } = await client.query<LeaseForClaim>(leaseStatements.selectLeaseForClaim, [sessionId, ownerId]);
    const lease = rows[0];
    if (lease === undefined) return undefined;
    // This owner's previous incarnation (one runtime per owner id at a time) is gone: its token stands.
    if (lease.owner_id === ownerId) return { claim: { status: 'claimed' }, token: Number(lease.token) };
    if (!lease.alive) {
      const taken = await client.query<{ token: string }>(leaseStatements.takeLease, [ownerId, sessionId]);
      return { claim: { status: 'claimed' }, token: Number(taken.rows[0]?.token) };
    }
    return { claim: { status: 'held_elsewhere', holder: { ownerId: lease.owner_id, address: lease.address } } };
  });
}

/**
 * Takes a session's lease: absent (token 1), this owner's already (token kept), or its holder
 * stopped renewing for a whole ttl while this runtime renewed (token + 1, which fences the old
 * holder's commits out; lease-statements.ts, holderDead). The row is locked for the claim, so of
 * two runtimes claiming together one wins and the other finds it held.
 */
export async function claimSession(pool: Pool, held: HeldLeases, sessionId: string): Promise<SessionClaim> {
  for (;;) {
    const claimed = await claimOnce(pool, held.ownerId, sessionId);
    if (claimed === undefined) continue;
    if (claimed.token !== undefined) held.hold(sessionId, claimed.token);
    return claimed.claim;
  }
}
