import { appendChannel, deletionPayload } from './append-notices.js';

/**
 * Whether `judge` (this runtime's own row) may take `holder` (another runtime's row) for dead, by the
 * database's clock: the judge renews now (its last heartbeat less than two of its beats ago), and the
 * holder has not renewed for a whole ttl of its own since its last heartbeat or since the judge's
 * unbroken run of renewals began (renewing_since), whichever is later. A holder cut off together
 * with the judge (the database down for both, the network cut, both paused) thus has a whole ttl,
 * once they are back, to renew before its sessions are taken. A judge with no row yet judges no one
 * dead. Both aliases are `runtimes` rows, LEFT JOINed; a holder whose row is missing is judged apart.
 */
function holderDead(holder: string, judge: string): string {
  return `(${judge}.renewing_since IS NOT NULL
    AND ${judge}.heartbeat_at + (${judge}.lease_ttl_ms * 2 / 3) * interval '1 millisecond' > now()
    AND greatest(${holder}.heartbeat_at, ${judge}.renewing_since)
      + ${holder}.lease_ttl_ms * interval '1 millisecond' <= now())`;
}

/** The SQL of leases and runtimes. $1 is this store's owner id wherever a statement needs it. */
export const leaseStatements = {
  // The heartbeat: creates or renews this runtime's row (the address kept when none is given). Its
  // unbroken run of renewals (holderDead) starts again when $4 says this process's previous renewal
  // failed (or there was none), or when the last one landed more than two beats ago.
  renewRuntime: `INSERT INTO runtimes (owner_id, address, heartbeat_at, lease_ttl_ms, renewing_since)
    VALUES ($1, $2, now(), $3, now())
    ON CONFLICT (owner_id) DO UPDATE SET heartbeat_at = now(), lease_ttl_ms = excluded.lease_ttl_ms,
      address = coalesce(excluded.address, runtimes.address),
      renewing_since = CASE
        WHEN $4::boolean OR runtimes.renewing_since IS NULL
          OR runtimes.heartbeat_at + (excluded.lease_ttl_ms * 2 / 3) * interval '1 millisecond' < now()
        THEN now() ELSE runtimes.renewing_since END`,
  advertise: 'UPDATE runtimes SET address = $2 WHERE owner_id = $1',
  // This owner's row as another process may have left it (owner-in-use.ts), alive by its own ttl.
  selectOwnRuntime: `SELECT address, extract(epoch FROM heartbeat_at)::text AS beat, lease_ttl_ms,
      (heartbeat_at + lease_ttl_ms * interval '1 millisecond' > now()) AS alive
    FROM runtimes WHERE owner_id = $1`,
  forgetRuntime: 'DELETE FROM runtimes WHERE owner_id = $1',
  // The open sessions whose lease this owner holds, by their stored state (a closed one's lease is given back).
  countHeldSessionsByState: `SELECT s.state, count(*) AS count FROM session_leases l
    JOIN sessions s ON s.session_id = l.session_id
    WHERE l.owner_id = $1 AND s.state <> 'closed' GROUP BY s.state`,
  insertLease: `INSERT INTO session_leases (session_id, owner_id, token) VALUES ($2, $1, 1)
    ON CONFLICT (session_id) DO NOTHING RETURNING token`,
  // The lease and whether its holder may still renew, as the claimer ($2) judges it (holderDead),
  // locked against other claims until the claim ends.
  selectLeaseForClaim: `SELECT lease.owner_id, lease.token, holder.address,
      (holder.owner_id IS NOT NULL AND NOT ${holderDead('holder', 'judge')}) AS alive
    FROM session_leases AS lease LEFT JOIN runtimes AS holder ON holder.owner_id = lease.owner_id
      LEFT JOIN runtimes AS judge ON judge.owner_id = $2
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
  // A deleted session's lease goes with it, and every runtime sharing the database hears of the
  // deletion (append-notices.ts), in the deleting transaction: only once, and only if, it commits.
  deleteLease: `WITH lease AS (DELETE FROM session_leases WHERE session_id = $1)
    SELECT pg_notify('${appendChannel}', ${deletionPayload('$1')})`,
  // Open sessions no live runtime holds: no lease, or a holder (not this runtime) whose row is gone or
  // that this runtime judges dead (holderDead).
  selectOwnOpenSessions: `SELECT session.session_id FROM sessions AS session
    JOIN session_leases AS lease ON lease.session_id = session.session_id
    WHERE lease.owner_id = $1 AND (session.state <> 'closed' OR session.live_process IS NOT NULL)
    ORDER BY session.session_id`,
  selectOrphans: `SELECT session.session_id FROM sessions AS session
    LEFT JOIN session_leases AS lease ON lease.session_id = session.session_id
    LEFT JOIN runtimes AS holder ON holder.owner_id = lease.owner_id
    LEFT JOIN runtimes AS judge ON judge.owner_id = $1
    WHERE (session.state <> 'closed' OR session.live_process IS NOT NULL)
      AND (lease.session_id IS NULL
        OR (lease.owner_id <> $1 AND (holder.owner_id IS NULL OR ${holderDead('holder', 'judge')})))
    ORDER BY session.session_id`,
} as const;
