import { AgentError } from '@tether/protocol';
import type { CommitUnit } from '@tether/runtime';
import type { PoolClient } from 'pg';
import type { HeldLeases } from './held-leases.js';
import { leaseStatements } from './lease-statements.js';

interface LeaseRow {
  readonly session_id: string;
  readonly owner_id: string;
  readonly token: string;
}

export function leaseLost(sessionIds: readonly string[]): AgentError {
  return new AgentError({
    code: 'store_failure',
    message: `Refused to write ${sessionIds.join(', ')}: another Tether runtime took the session over after this one stopped renewing its lease; nothing was written. The runtime holding it now drives it.`,
    details: { reason: 'lease_lost', sessionIds: [...sessionIds] },
  });
}

/** The sessions whose rows a unit writes (receipts belong to no session). */
export function sessionsTouched(unit: CommitUnit): string[] {
  const touched = new Set<string>();
  for (const { sessionId } of [...unit.events, ...unit.sessions, ...unit.runs, ...unit.interactions, ...unit.blobs])
    touched.add(sessionId);
  return [...touched].sort((left, right) => (left < right ? -1 : left > right ? 1 : 0));
}

/**
 * The fencing check, in the transaction that writes the sessions: each must be held by this store
 * with the token it holds (a session this owner holds but this store never claimed — its previous
 * incarnation did — is taken as held: a claim would not change its token). A session no one holds,
 * and this store did not hold, is claimed here, so a caller that did not claim first still writes. Anything else refuses the whole
 * unit (lease_lost). The leases stay locked FOR SHARE until the transaction ends, so a takeover
 * waits for this commit. Returns the tokens to hold once the transaction has committed.
 */
export async function checkLeases(
  client: PoolClient,
  held: HeldLeases,
  sessionIds: readonly string[],
): Promise<Map<string, number>> {
  const holding = new Map<string, number>();
  if (sessionIds.length === 0) return holding;
  const leases = new Map<string, LeaseRow>();
  const share = async (ids: readonly string[]) => {
    const { rows } = await client.query<LeaseRow>(leaseStatements.shareLeases, [ids]);
    for (const row of rows) leases.set(row.session_id, row);
  };
  await share(sessionIds);
  // A lease this store holds whose row is gone was taken and given up by another runtime since.
  const unheld = sessionIds.filter((sessionId) => !leases.has(sessionId) && held.tokenOf(sessionId) === undefined);
  if (unheld.length > 0) {
    const { rows } = await client.query<{ session_id: string }>(leaseStatements.insertLeases, [held.ownerId, unheld]);
    for (const { session_id } of rows) leases.set(session_id, { session_id, owner_id: held.ownerId, token: '1' });
    // Claimed by another writer between the two statements: its lease decides, as for any other.
    const raced = unheld.filter((sessionId) => !leases.has(sessionId));
    if (raced.length > 0) await share(raced);
  }
  const lost: string[] = [];
  for (const sessionId of sessionIds) {
    const lease = leases.get(sessionId);
    const token = Number(lease?.token);
    const mine = held.tokenOf(sessionId);
    if (lease?.owner_id === held.ownerId && (mine === undefined || mine === token)) holding.set(sessionId, token);
    else lost.push(sessionId);
  }
  if (lost.length > 0) throw leaseLost(lost);
  return holding;
}
