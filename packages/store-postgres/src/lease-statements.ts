/**
 * A runtime row alive by the database's clock: its last heartbeat is less than its own ttl ago.
 * `holder` is the alias of a `runtimes` row (absent when LEFT JOINed and missing).
 */
function holderAlive(holder: string): string {
  return `(${holder}.heartbeat_at + ${holder}.lease_ttl_ms * interval '1 millisecond' > now())`;
}

/** The SQL of leases and runtimes. $1 is this store's owner id wherever a statement needs it. */
export const leaseStatements = {
  // The heartbeat: creates or renews this runtime's row (the address kept when none is given).
  renewRuntime: `INSERT INTO runtimes (owner_id, address, heartbeat_at, lease_ttl_ms) VALUES ($1, $2, now(), $3)
    ON CONFLICT (owner_id) DO UPDATE SET heartbeat_at = now(), lease_ttl_ms = excluded.lease_ttl_ms,
      address = coalesce(excluded.address, runtimes.address)`,
  advertise: 'UPDATE runtimes SET address = $2 WHERE owner_id = $1',
  forgetRuntime: 'DELETE FROM runtimes WHERE owner_id = $1',
  insertLease: `INSERT INTO session_leases (session_id, owner_id, token) VALUES ($2, $1, 1)
    ON CONFLICT (session_id) DO NOTHING RETURNING token`,
  // The lease and whether its holder still renews, locked against other claims until the claim ends.
  selectLeaseForClaim: `SELECT lease.owner_id, lease.token, holder.address,
      (holder.owner_id IS NOT NULL AND ${holderAlive('holder')}) AS alive
    FROM session_leases AS lease LEFT JOIN runtimes AS holder ON holder.owner_id = lease.owner_id
    WHERE lease.session_id = $1 FOR UPDATE OF lease`,
  takeLease: 'UPDATE session_leases SET owner_id = $1, token = token + 1 WHERE session_id = $2 RETURNING token',
  // Inside a commit: the leases of the sessions it touches, held against takeovers until it ends.
  // In session-id order, as the heads are locked, so two commits cannot deadlock on them.
  shareLeases: `SELECT session_id, owner_id, token FROM session_leases WHERE session_id = ANY($1::text[])
    ORDER BY session_id FOR SHARE`,
  insertLeases: `INSERT INTO session_leases (session_id, owner_id, token) SELECT unnest($2::text[]), $1, 1
    ON CONFLICT (session_id) DO NOTHING RETURNING session_id`,
  selectLeases: 'SELECT session_id, owner_id, token FROM session_leases WHERE session_id = ANY($1::text[])',
  releaseLeases: 'DELETE FROM session_leases WHERE owner_id = $1 AND session_id = ANY($2::text[])',
  releaseAllLeases: 'DELETE FROM session_leases WHERE owner_id = $1',
  deleteLease: 'DELETE FROM session_leases WHERE session_id = $1',
  // Open sessions no live runtime holds: no lease, or a holder (not this runtime) that stopped renewing.
  selectOrphans: `SELECT session.session_id FROM sessions AS session
    LEFT JOIN session_leases AS lease ON lease.session_id = session.session_id
    LEFT JOIN runtimes AS holder ON holder.owner_id = lease.owner_id
    WHERE (session.state <> 'closed' OR session.live_process IS NOT NULL)
      AND (lease.session_id IS NULL
        OR (lease.owner_id <> $1 AND (holder.owner_id IS NULL OR NOT ${holderAlive('holder')})))
    ORDER BY session.session_id`,
} as const;
