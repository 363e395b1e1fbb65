import type { TetherStore } from '@tether/runtime';
import pg from 'pg';
import { type DatabaseHold, holdDatabase } from './database-hold.js';
import { applyMigrations } from './migrations/apply-migrations.js';
import { createPostgresStore } from './postgres-store.js';
import { guardStore, storeFailure } from './store-failure.js';

export interface PostgresStoreOptions {
  /** A postgres:// (or postgresql://) connection URL: host, port, database, user and password. */
  readonly url: string;
  /** The pool's size (default 10): connections this store opens at most. */
  readonly maxConnections?: number;
  /**
   * Let other stores use the database at the same time (tests of the database's own guarantees, and
   * tools that only read). Off by default: a runtime holds its database alone (database-hold.ts),
   * and a second one is refused with data_dir_in_use (reason database_in_use).
   */
  readonly shareDatabase?: boolean;
}

const defaultMaxConnections = 10;

/** Where the URL points, for messages: host, port and database, never the user or password. */
function describeTarget(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw storeFailure(
      'The store URL is not a URL. Give one like postgres://user:password@host:5432/database.',
      'invalid_url',
    );
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') {
    throw storeFailure(
      `The store URL has the scheme ${parsed.protocol} where postgres: was expected. Give one like postgres://user:password@host:5432/database.`,
      'invalid_url',
    );
  }
  return `${parsed.hostname}:${parsed.port || '5432'}${parsed.pathname}`;
}

/**
 * Opens a pool on the database and brings its schema up to date (under an advisory lock, so daemons
 * opening the same database together migrate it once), then holds the database for this runtime
 * (unless shareDatabase). Stores that share a database keep each session's sequence whole: the
 * database, not the process, guards it.
 */
export async function openPostgresStore(options: PostgresStoreOptions): Promise<TetherStore> {
  const target = describeTarget(options.url);
  const pool = new pg.Pool({ connectionString: options.url, max: options.maxConnections ?? defaultMaxConnections });
  // A pooled connection that breaks while idle is dropped by the pool; the next query on a fresh one
  // reports any lasting trouble. Without a listener the event would end the process.
  pool.on('error', () => undefined);
  let hold: DatabaseHold | null = null;
  try {
    await guardStore(`prepare the database ${target}`, () => applyMigrations(pool, target));
    if (options.shareDatabase !== true)
      hold = await guardStore(`hold the database ${target}`, () => holdDatabase(options.url, target));
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw error;
  }
  const store = createPostgresStore(pool);
  if (!hold) return store;
  const held = hold;
  const closeStore = store.close.bind(store);
  return Object.assign(store, {
    async close() {
      try {
        await closeStore();
      } finally {
        await held.release();
      }
    },
  });
}
