import type { TetherStore } from '@tether/runtime';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { ConnectionHealth } from './connection-health.js';
import { HeldLeases } from './held-leases.js';
import { applyMigrations } from './migrations/apply-migrations.js';
import { createCoordination } from './postgres-coordination.js';
import { cutConnection } from './cut-connection.js';
import { createPostgresStore } from './postgres-store.js';
import { guardStore, storeFailure } from './store-failure.js';
import { WriteQueue } from './write-queue.js';
import { connectionUrl, describeTarget } from './store-target.js';

export interface PostgresStoreOptions {
  /** A postgres:// (or postgresql://) connection URL: host, port, database, user and password. */
  readonly url: string;
  /** The pool's size (default 10): connections this store opens at most. */
  readonly maxConnections?: number;
  /**
   * This runtime's identity among those sharing the database: the owner of the session leases it
   * takes. Stable per data directory, so a restarted daemon takes its sessions back at once (default:
   * a random one, which makes its previous incarnation's leases wait for their ttl).
   */
  readonly ownerId?: string;
  /** How long a lease outlives its holder's last heartbeat, in ms (default 15000); the heartbeat runs every third of it. */
  readonly leaseTtlMs?: number;
  /**
   * The owner id names one process (a data dir's store-owner-id): refuse to open, store_failure
   * with reason owner_id_in_use and nothing written, while another process renews it. Opening after
   * a predecessor that died less than its ttl ago waits at most two of its heartbeat intervals for
   * that to show. Default false (processes may share an owner id on purpose, as tests do).
   */
  readonly exclusiveOwner?: boolean;
  /**
   * With exclusiveOwner: told, with how long at most, when opening waits to see whether the row its
   * owner id left (a predecessor that died less than its ttl ago, or a live twin) is still renewed.
   */
  readonly onOwnerWait?: (waitMs: number) => void;
}

const defaultMaxConnections = 10;
const defaultLeaseTtlMs = 15_000;
/** How long opening a connection may take, answer to the login included. */
export const connectTimeoutMs = 5_000;

/**
 * Opens a pool on the database and brings its schema up to date (under an advisory lock, so daemons
 * opening the same database together migrate it once), then registers this runtime among those
 * sharing it (its heartbeat row) so it can take session leases: the store's `coordination`.
 */
export async function openPostgresStore(options: PostgresStoreOptions): Promise<TetherStore> {
  const target = describeTarget(options.url);
  const url = connectionUrl(options.url);
  const leaseTtlMs = options.leaseTtlMs ?? defaultLeaseTtlMs;
  if (!Number.isInteger(leaseTtlMs) || leaseTtlMs <= 0)
    throw storeFailure(
      `The lease ttl must be a whole number of milliseconds above 0, not ${leaseTtlMs}.`,
      'invalid_lease_ttl',
    );
  // Every connection the pool opens, connected or still connecting, so a store told to stop waiting
  // (abandon) can cut them all: an attempt on a server that accepts and never answers would otherwise
  // wait out its own timeout.
  const connections = new Set<pg.Client>();
  class TrackedClient extends pg.Client {
    constructor(config?: string | pg.ClientConfig) {
      super(config);
      connections.add(this);
      this.once('end', () => connections.delete(this));
    }
  }
  const pool = new pg.Pool({
    Client: TrackedClient as unknown as new () => pg.ClientBase,
    connectionString: url,
    max: options.maxConnections ?? defaultMaxConnections,
    // A commit holds its sessions' leases FOR SHARE until it ends, and a takeover waits for it. A
    // runtime frozen inside one (stopped, paused, cut off) would hold them for ever: the server ends
    // a transaction left idle for a lease's ttl, by when its lease has lapsed anyway.
    idle_in_transaction_session_timeout: leaseTtlMs,
    // A server that takes the connection but never answers (stopped, or cut off behind a firewall that
    // drops packets) would hold a new connection, and whatever waits for it (a start, a command), for
    // ever: the attempt ends as a lost connection, which is retried within its bound.
    connectionTimeoutMillis: connectTimeoutMs,
  });
  // A pooled connection that breaks while idle is dropped by the pool; the next query on a fresh one
  // reports any lasting trouble. Without a listener the event would end the process.
  pool.on('error', () => undefined);
  // Nor while the pool ends one (released broken, or at close) and the server's goodbye arrives
  // first ("terminating connection due to administrator command"): the pool listens only while a
  // connection is idle, and the statement that broke it has already reported the failure.
  pool.on('connect', (client) => client.on('error', () => undefined));
  const writes = new WriteQueue();
  const held = new HeldLeases(options.ownerId ?? randomUUID());
  // Unresponsive once no renewal landed for two beats: when the others may no longer count on it (lease-statements.ts, holderDead).
  const health = new ConnectionHealth((2 * leaseTtlMs) / 3);
  const coordination = createCoordination({
    url,
    pool,
    writes,
    held,
    leaseTtlMs,
    exclusiveOwner: options.exclusiveOwner ? { target, onWait: options.onOwnerWait } : undefined,
    health,
  });
  try {
    await guardStore(`prepare the database ${target}`, () => applyMigrations(pool, target));
    await coordination.start();
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw error;
  }
  return createPostgresStore({
    pool,
    writes,
    held,
    coordination: coordination.coordination,
    health: () => health.report(),
    closeCoordination: () => coordination.close(),
    cutConnections: () => {
      coordination.abandon();
      for (const client of connections) cutConnection(client);
    },
  });
}
