import pg from 'pg';
import { schemaTooNew } from './migrations/apply-migrations.js';
import { latestSchemaVersion } from './migrations/migrations.js';
import { connectTimeoutMs } from './open-postgres-store.js';
import { guardStore } from './store-failure.js';
import { connectionUrl, describeTarget } from './store-target.js';

/** What a database holds for Tether, read without changing it. */
export interface PostgresStoreCheck {
  /** Host, port and database (never the user or password). */
  readonly target: string;
  /** The newest migration applied there; 0 for a database no Tether has opened yet. */
  readonly schemaVersion: number;
  /** The newest this Tether knows (it migrates an older database when it opens it). */
  readonly latestSchemaVersion: number;
}

/**
 * Whether this Tether could open the database (tether doctor): one connection, the schema's version
 * read, nothing migrated, no lease taken, nothing written. Rejects as opening it would: store_failure
 * with the connection's trouble, or schema_too_new for a database a newer Tether wrote.
 */
export async function checkPostgresStore(url: string): Promise<PostgresStoreCheck> {
  const target = describeTarget(url);
  // Bounded: a read queued behind another Tether's migration (its lock) must not hold doctor.
  const client = new pg.Client({
    connectionString: connectionUrl(url),
    connectionTimeoutMillis: connectTimeoutMs,
    statement_timeout: connectTimeoutMs,
    query_timeout: connectTimeoutMs,
  });
  // A connection that breaks while this reads is reported by the query; without a listener it would end the process.
  client.on('error', () => undefined);
  try {
    return await guardStore(`read the database ${target}`, async () => {
      await client.connect();
      const table = await client.query<{ present: boolean }>(
        "SELECT to_regclass('schema_migrations') IS NOT NULL AS present",
      );
      const newest = table.rows[0]?.present
        ? Number(
            (
              await client.query<{ newest: number }>(
                'SELECT coalesce(max(version), 0) AS newest FROM schema_migrations',
              )
            ).rows[0]?.newest ?? 0,
          )
        : 0;
      if (newest > latestSchemaVersion) throw schemaTooNew(target, newest);
      return { target, schemaVersion: newest, latestSchemaVersion };
    });
  } finally {
    await client.end().catch(() => undefined);
  }
}
