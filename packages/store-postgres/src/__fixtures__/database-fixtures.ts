import type { ProtocolEvent } from '@tether/protocol';
import type { CommitUnit, SessionCoordination, SessionRecord, TetherStore } from '@tether/runtime';
import pg from 'pg';
import { afterEach } from 'vitest';
import { openPostgresStore, type PostgresStoreOptions } from '../index.js';

/** A PostgreSQL store, whose coordination is always there. */
export type SharedStore = TetherStore & { readonly coordination: SessionCoordination };

/** Opens stores for the test file that calls this, closing them after each test. */
export function useStores(): (options: PostgresStoreOptions) => Promise<SharedStore> {
  const opened: TetherStore[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((store) => store.close()));
  });
  return async (options) => {
    const store = await openPostgresStore(options);
    opened.push(store);
    if (store.coordination === undefined) throw new Error('A PostgreSQL store has a coordination.');
    return store as SharedStore;
  };
}

/**
 * For the test file that calls this: stalls a runtime's heartbeat as a stuck daemon's would stall
 * while the rest of it (its notice listener, its reads) works: a transaction locks its row, so its
 * renewals wait, and its leases lapse once the ttl passes. The function returned lets them through;
 * the locking connections end after each test.
 */
export function useHeartbeatStalls(): (url: string, ownerId: string) => Promise<() => Promise<void>> {
  const holders: pg.Client[] = [];
  afterEach(async () => {
    await Promise.all(holders.splice(0).map((client) => client.end().catch(() => undefined)));
  });
  return async (url, ownerId) => {
    const client = new pg.Client({ connectionString: url });
    holders.push(client);
    await client.connect();
    await client.query('BEGIN');
    await client.query('SELECT owner_id FROM runtimes WHERE owner_id = $1 FOR UPDATE', [ownerId]);
    return async () => {
      await client.query('ROLLBACK');
    };
  };
}

/** One statement on a connection of its own, outside any store. */
export async function query<Row extends pg.QueryResultRow>(
  url: string,
  text: string,
  values: unknown[] = [],
): Promise<Row[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<Row>(text, values)).rows;
  } finally {
    await client.end();
  }
}

async function backends(url: string, condition: string): Promise<number[]> {
  const rows = await query<{ pid: number }>(
    url,
    `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND ${condition}`,
  );
  return rows.map((row) => row.pid);
}

/** The backends of the database waiting for a lock: the writers a holding transaction keeps waiting. */
export function waitingForLocks(url: string): Promise<number[]> {
  return backends(url, `wait_event_type = 'Lock'`);
}

/** The backends of the database listening for append notices (a store's notice listener, once connected). */
export function noticeListeners(url: string): Promise<number[]> {
  return backends(url, `query = 'LISTEN tether_appends'`);
}

/** Diagnostic events from..to of a session, each carrying `code` (which writer made it). */
export function diagnosticEvents(sessionId: string, from: number, to: number, code = 'test'): ProtocolEvent[] {
  return Array.from({ length: to - from + 1 }, (_, index) => ({
    type: 'diagnostic' as const,
    sessionId,
    seq: from + index,
    at: '2026-12-01T00:00:00.000Z',
    level: 'info' as const,
    code,
  }));
}

export function unitOf(events: ProtocolEvent[], sessions: SessionRecord[] = []): CommitUnit {
  return { events, sessions, runs: [], interactions: [], receipts: [], blobs: [] };
}

export function seqs(events: readonly ProtocolEvent[]): number[] {
  return events.map((event) => event.seq);
}
