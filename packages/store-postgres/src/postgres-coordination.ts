import type { AppendNotice, SessionCoordination } from '@tether/runtime';
import type { Pool } from 'pg';
import { claimSession } from './claim-session.js';
import type { ConnectionHealth } from './connection-health.js';
import type { HeldLeases } from './held-leases.js';
import { type Heartbeat, startHeartbeat } from './heartbeat.js';
import { leaseStatements } from './lease-statements.js';
import { ListenerSet } from './listener-set.js';
import { createNoticeListener } from './notice-listener.js';
import { refuseLiveTwin } from './owner-in-use.js';
import { rerunWhenOutcomeUnknown, retryConnectionLoss } from './connection-retry.js';
import { guardStore } from './store-failure.js';
import { inTransaction } from './transaction.js';
import type { WriteQueue } from './write-queue.js';

export interface CoordinationOptions {
  /** Where the notice listener connects (its own connection, outside the pool). */
  readonly url: string;
  readonly pool: Pool;
  readonly writes: WriteQueue;
  readonly held: HeldLeases;
  readonly leaseTtlMs: number;
  /** Refuse to start while another live process renews this owner id (owner-in-use.ts), naming the database so. */
  readonly exclusiveOwner?:
    | { readonly target: string; readonly onWait?: ((waitMs: number) => void) | undefined }
    | undefined;
  /** What the heartbeat's renewals tell of the connection (the store's health()). */
  readonly health: ConnectionHealth;
}

export interface PostgresCoordination {
  readonly coordination: SessionCoordination;
  /** Registers this runtime (its row in `runtimes`) and starts the heartbeat. */
  start(): Promise<void>;
  /** Stops the heartbeat and the notice listener, hands every lease of this owner back, and forgets the runtime's row. */
  close(): Promise<void>;
  /** Cuts the notice listener's connection and stops listening (the store stops waiting for its server). */
  abandon(): void;
}

/** The SessionCoordination of a PostgreSQL store: leases, heartbeat, orphans, and append notices. */
export function createCoordination({
  url,
  pool,
  writes,
  held,
  leaseTtlMs,
  exclusiveOwner,
  health,
}: CoordinationOptions): PostgresCoordination {
  const lostListeners = new ListenerSet<readonly string[]>();
  const appendListeners = new ListenerSet<AppendNotice | 'resync'>();
  const deletionListeners = new ListenerSet<string>();
  // Connected when the first listener arrives: a runtime that follows nothing holds no connection for it.
  const notices = createNoticeListener({
    url,
    onNotice: (notice) => {
      if (notice === 'resync') appendListeners.emit(notice);
      else if (notice.kind === 'appended') appendListeners.emit(notice.notice);
      else deletionListeners.emit(notice.sessionId);
    },
  });
  let address: string | null = null;
  let heartbeat: Heartbeat | undefined;
  /** Retried over a connection loss, as the store's reads and writes are; every failure a store_failure. */
  const reliably = <Result>(action: string, work: () => Promise<Result>) =>
    guardStore(action, () => retryConnectionLoss(action, work));

  const coordination: SessionCoordination = {
    ownerId: held.ownerId,
    // Often enough that a dead holder's sessions are taken over soon after its leases lapse.
    sweepIntervalMs: leaseTtlMs,
    // A claim run twice claims once: the second finds the lease its own, token unchanged.
    claim: (sessionId) =>
      reliably('claim the session', () => rerunWhenOutcomeUnknown(() => claimSession(pool, held, sessionId))),
    // Queued behind the writes called before it: a commit already made lands under the lease.
    release: (sessionIds) =>
      writes.run(() =>
        reliably('release the sessions', async () => {
          if (sessionIds.length === 0) return;
          // Forgotten first, so the heartbeat never takes the released rows for lost ones.
          held.forget(sessionIds);
          await pool.query(leaseStatements.releaseLeases, [held.ownerId, sessionIds]);
        }),
      ),
    findOrphans: () =>
      reliably('look for sessions no runtime holds', async () => {
        const { rows } = await pool.query<{ session_id: string }>(leaseStatements.selectOrphans, [held.ownerId]);
        return rows.map((row) => row.session_id);
      }),
    findOwn: () =>
      reliably('look for the sessions this owner id holds', async () => {
        const { rows } = await pool.query<{ session_id: string }>(leaseStatements.selectOwnOpenSessions, [
          held.ownerId,
        ]);
        return rows.map((row) => row.session_id);
      }),
    onAppended: (listener) => {
      const remove = appendListeners.add(listener);
      notices.start();
      return remove;
    },
    onDeleted: (listener) => {
      const remove = deletionListeners.add(listener);
      notices.start();
      return remove;
    },
    onLost: (listener) => lostListeners.add(listener),
    countHeldSessionsByState: () =>
      reliably('count the sessions this runtime holds', async () => {
        const counts = { idle: 0, running: 0, waiting: 0, closed: 0 };
        const { rows } = await pool.query<{ state: string; count: string }>(leaseStatements.countHeldSessionsByState, [
          held.ownerId,
        ]);
        for (const row of rows) if (row.state in counts) counts[row.state as keyof typeof counts] = Number(row.count);
        return counts;
      }),
    advertise: (advertised) =>
      reliably('advertise the runtime address', async () => {
        address = advertised;
        await pool.query(leaseStatements.advertise, [held.ownerId, advertised]);
      }),
  };

  return {
    coordination,
    async start() {
      if (exclusiveOwner)
        await guardStore('check the owner id is free', () =>
          refuseLiveTwin(pool, held.ownerId, exclusiveOwner.target, exclusiveOwner.onWait),
        );
      heartbeat = startHeartbeat({
        pool,
        held,
        leaseTtlMs,
        address: () => address,
        onLost: (sessionIds) => lostListeners.emit(sessionIds),
        health,
      });
      await guardStore('register the runtime', () => heartbeat!.beat()).catch(async (error: unknown) => {
        await heartbeat?.stop();
        throw error;
      });
    },
    async close() {
      await Promise.all([heartbeat?.stop(), notices.close()]);
      // Best effort: a store that cannot reach the server now still closes, and its leases lapse
      // after the ttl instead of at once.
      await inTransaction(pool, async (client) => {
        await client.query(leaseStatements.releaseAllLeases, [held.ownerId]);
        await client.query(leaseStatements.forgetRuntime, [held.ownerId]);
      }).catch(() => undefined);
      held.forget(held.snapshot().keys());
    },
    abandon() {
      notices.abandon();
    },
  };
}
