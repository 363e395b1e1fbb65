import type { Pool } from 'pg';
import type { ConnectionHealth } from './connection-health.js';
import type { HeldLeases } from './held-leases.js';
import { leaseStatements } from './lease-statements.js';

export interface HeartbeatOptions {
  readonly pool: Pool;
  readonly held: HeldLeases;
  readonly leaseTtlMs: number;
  /** The address to (re)write with the runtime's row: null keeps what is stored. */
  readonly address: () => string | null;
  /** Sessions found held by another runtime, or with another token, than this store holds. */
  readonly onLost: (sessionIds: readonly string[]) => void;
  /** Told of each renewal's outcome: the store's health is what its heartbeat last found. */
  readonly health: ConnectionHealth;
}

export interface Heartbeat {
  /** Renews the runtime's row and looks for lost leases now (start-up registers the runtime with it). */
  beat(): Promise<void>;
  /** Stops the timer and waits for a beat in flight, so none writes after the store released its leases. */
  stop(): Promise<void>;
}

interface LeaseRow {
  readonly session_id: string;
  readonly owner_id: string;
  readonly token: string;
}

async function findLost(pool: Pool, held: HeldLeases): Promise<string[]> {
  const snapshot = held.snapshot();
  if (snapshot.size === 0) return [];
  const { rows } = await pool.query<LeaseRow>(leaseStatements.selectLeases, [[...snapshot.keys()]]);
  const leases = new Map(rows.map((row) => [row.session_id, row]));
  // Gone: another runtime took the lease and gave it up (this store's own release forgets it first).
  const taken = [...snapshot].flatMap(([sessionId, token]) => {
    const lease = leases.get(sessionId);
    return lease?.owner_id === held.ownerId && Number(lease.token) === token ? [] : [sessionId];
  });
  // A claim made while the rows were read stands: only leases still held with the token read are lost.
  return held.forgetUnchanged(snapshot, taken);
}

/**
 * Renews this runtime's row every ttl/3 (by the database's clock, so clocks between machines need
 * not agree) and checks, each time, that the sessions it holds are still its own. A beat that fails
 * (the server unreachable) is simply missed: the next one tries again, and if none succeeds within
 * the ttl the leases lapse, which is what they are for.
 *
 * The row also keeps where this runtime's unbroken run of renewals began (renewing_since): at its
 * first renewal, and again at the first one after a renewal failed here, or that landed more than two
 * beats after the last (the process stalled, or the beat hung on a connection that was cut off). A
 * database outage the runtimes shared thus starts every run afresh, and none of them takes the
 * others' sessions before those had a whole ttl to renew (lease-statements.ts, holderDead).
 */
export function startHeartbeat({ pool, held, leaseTtlMs, address, onLost, health }: HeartbeatOptions): Heartbeat {
  const intervalMs = Math.max(1, Math.floor(leaseTtlMs / 3));
  let inFlight: Promise<void> | undefined;
  let stopped = false;
  /** No renewal of this process has landed since it started, or since one failed: a new run begins. */
  let resumed = true;

  async function renew(): Promise<void> {
    try {
      await pool.query(leaseStatements.renewRuntime, [held.ownerId, address(), leaseTtlMs, resumed]);
    } catch (error) {
      // Perhaps it landed and only the answer was lost: the next run then starts a little later.
      resumed = true;
      health.failed(error);
      throw error;
    }
    health.succeeded();
    resumed = false;
    const lost = await findLost(pool, held);
    if (lost.length > 0 && !stopped) onLost(lost);
  }

  function beat(): Promise<void> {
    inFlight ??= renew().finally(() => {
      inFlight = undefined;
    });
    return inFlight;
  }

  const timer = setInterval(() => {
    beat().catch(() => undefined);
  }, intervalMs);
  timer.unref();
  return {
    beat,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await inFlight?.catch(() => undefined);
    },
  };
}
