import type { Migration } from './migration.js';

// Which runtime drives each session (see the ADR 2026-12-01-postgres-leases-and-fencing.md).
// `runtimes`: one row per owner id, renewed by its heartbeat; a runtime is alive while
// heartbeat_at + lease_ttl_ms is after the database's now() (never a process's clock), each runtime
// judged by the ttl it renews with. `session_leases`: the session's holder and its fencing token,
// raised by every claim that takes the session from another holder; a commit checks it in its own
// transaction (FOR SHARE), so a takeover waits for a commit in flight and a stale holder's next one
// is refused. No foreign keys, as in migration 1: a session is claimed before its first commit.
export const sessionLeasesMigration: Migration = {
  version: 2,
  name: 'session leases',
  sql: `
    CREATE TABLE runtimes (
      owner_id text PRIMARY KEY,
      address text,
      heartbeat_at timestamptz NOT NULL,
      lease_ttl_ms integer NOT NULL CHECK (lease_ttl_ms > 0)
    );

    CREATE TABLE session_leases (
      session_id text COLLATE "C" PRIMARY KEY,
      owner_id text NOT NULL,
      token bigint NOT NULL CHECK (token > 0)
    );
    CREATE INDEX session_leases_by_owner ON session_leases (owner_id);
  `,
};
