import type { StoreHealth } from '@tether/runtime';
import { agentErrorOf, sampleSessionRecord } from '@tether/testkit';
import { describe, expect, it } from 'vitest';
import { diagnosticEvents, query, unitOf, useHeartbeatStalls, useStores } from './__fixtures__/database-fixtures.js';
import { useTestServer } from './__fixtures__/test-server.js';
import { openPostgresStore } from './index.js';

// Its own server: stopped and started again under an open store.
const server = useTestServer();
const openStore = useStores();
const stallHeartbeat = useHeartbeatStalls();
// Beats every 300 ms: a lost server shows within one beat, an unanswered heartbeat within two.
const leaseTtlMs = 900;

/** Every spelling of the URL's password that must never reach a message. */
function passwordForms(url: string): string[] {
  const password = new URL(url).password;
  return [password, decodeURIComponent(password)];
}

function expectNoPassword(text: string, url: string): void {
  for (const form of passwordForms(url)) expect(text).not.toContain(form);
}

describe('PostgreSQL store: health, as its heartbeat finds it', () => {
  it('reports store_unreachable with the cause and what to do while its server is down, and ok once it is back', async () => {
    const url = await server().createDatabase();
    const store = await openStore({ url, ownerId: 'daemon-a', leaseTtlMs });
    expect(store.health?.()).toEqual({ ok: true });
    let down: StoreHealth | undefined;
    await server().restart({
      whileStopped: async () => {
        await expect(query(url, 'SELECT 1')).rejects.toThrow();
        await expect.poll(() => store.health?.().ok, { timeout: 5_000, interval: 20 }).toBe(false);
        down = store.health?.();
      },
    });
    expect(down).toMatchObject({ ok: false, reason: 'store_unreachable', cause: 'ECONNREFUSED' });
    expect(down?.message).toContain('start the PostgreSQL server');
    expect(Date.parse(down?.since ?? '')).not.toBeNaN();
    expectNoPassword(JSON.stringify(down), url);
    await expect.poll(() => store.health?.(), { timeout: 10_000, interval: 20 }).toEqual({ ok: true });
  }, 60_000);

  it('reports store_unresponsive once no renewal has landed for two beats, and ok once they land again', async () => {
    const url = await server().createDatabase();
    const store = await openStore({ url, ownerId: 'daemon-a', leaseTtlMs });
    const release = await stallHeartbeat(url, 'daemon-a');
    await expect.poll(() => store.health?.().reason, { timeout: 5_000, interval: 20 }).toBe('store_unresponsive');
    expect(store.health?.().message).toContain('has not answered');
    await release();
    await expect.poll(() => store.health?.(), { timeout: 5_000, interval: 20 }).toEqual({ ok: true });
  });
});

describe('PostgreSQL store: what its failures tell an operator to do', () => {
  it('names wrong credentials (28P01) and a missing database (3D000), and never the password', async () => {
    const url = await server().createDatabase();
    const wrongPassword = new URL(url);
    wrongPassword.password = 'not-the-password';
    const refused = await agentErrorOf(openPostgresStore({ url: wrongPassword.href }));
    expect(refused.code).toBe('store_failure');
    expect(refused.message).toContain('SQLSTATE 28P01');
    expect(refused.message).toContain('correct the credentials in the store URL');
    expect(refused.message).not.toContain('not-the-password');

    const missing = new URL(url);
    missing.pathname = '/no_such_database';
    const absent = await agentErrorOf(openPostgresStore({ url: missing.href }));
    expect(absent.message).toContain('SQLSTATE 3D000');
    expect(absent.message).toContain('does not exist: create it');
    expectNoPassword(absent.message, url);
  });

  it('names a read-only server (25006) when a commit is refused for it', async () => {
    const url = await server().createDatabase();
    const store = await openStore({ url, ownerId: 'daemon-a' });
    const sessionId = `ses_${'a'.repeat(32)}`;
    await store.coordination.claim(sessionId);
    const database = new URL(url).pathname.slice(1);
    await query(url, `ALTER DATABASE ${database} SET default_transaction_read_only = on`);
    // The setting reaches connections opened from now on: the pool's current ones are ended.
    await query(
      url,
      'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
    );
    const error = await agentErrorOf(
      store.commit(unitOf(diagnosticEvents(sessionId, 1, 1), [sampleSessionRecord({ sessionId, lastSeq: 1 })])),
    );
    expect(error.message).toContain('SQLSTATE 25006');
    expect(error.message).toContain('point the store URL at the primary');
  }, 30_000);

  it('keeps a password given in the query, percent-encoded, out of every message', async () => {
    const url = await server().createDatabase();
    const parsed = new URL(url);
    // The server's password sent as ?password=, percent-encoded; a wrong database makes the open fail.
    const password = parsed.password;
    const encoded = [...password].map((character) => `%${character.charCodeAt(0).toString(16)}`).join('');
    const inQuery = `postgres://${parsed.username}@${parsed.host}/no_such_database?password=${encoded}`;
    const error = await agentErrorOf(openPostgresStore({ url: inQuery }));
    expect(error.message).toContain('SQLSTATE 3D000');
    for (const form of [password, encoded]) {
      expect(error.message).not.toContain(form);
      expect(JSON.stringify(error.toObject())).not.toContain(form);
    }
  });
});
