import { existsSync, readFileSync, statSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { textReply } from '@tether/fake-anthropic-api';
import { isAlive } from '@tether/provider-claude/test-support';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { useCommandFixture } from './test-support/command-fixture.js';
import { type ServedTether, stopTether, useTetherDaemons } from './test-support/serve-tether.js';
import { type FinishedTether, sessionIdFrom, spawnTether } from './test-support/spawn-tether.js';

const fixture = useCommandFixture('tether-embedded-postgres-');

/** Clusters made outside the test's directory (as root they live under /var/lib/tether). */
const clusters = new Set<string>();
// Registered before the daemons' stop, so it runs after it (after-hooks run in reverse).
afterEach(async () => {
  await Promise.all([...clusters].map((cluster) => rm(cluster, { recursive: true, force: true })));
  clusters.clear();
});
const daemons = useTetherDaemons(fixture);

const dataDir = () => path.join(fixture.root, 'data');
const environment = () => ({ ...fixture.environment, TETHER_HOME: dataDir() });

function tether(args: readonly string[]): Promise<FinishedTether> {
  return spawnTether(args, { cwd: fixture.workspace, environment: environment() }).finished;
}

/** `tether serve --port 0 --no-web ARGS` on the test's data dir, once it listens. */
function serve(args: readonly string[]): Promise<ServedTether> {
  return daemons.start(args, environment());
}

interface ClusterRecord {
  readonly clusterDirectory: string;
  readonly password: string;
}

function clusterRecord(): ClusterRecord {
  const file = path.join(dataDir(), 'embedded-postgres.json');
  expect(statSync(file).mode & 0o777).toBe(0o600);
  const record = JSON.parse(readFileSync(file, 'utf8')) as ClusterRecord;
  const clusterDirectory = path.resolve(dataDir(), record.clusterDirectory);
  if (!clusterDirectory.startsWith(fixture.root)) clusters.add(clusterDirectory);
  // A test that looks for an empty password in the output could not fail.
  expect(record.password.length).toBeGreaterThanOrEqual(16);
  return { clusterDirectory, password: record.password };
}

function ownerId(): string {
  const file = path.join(dataDir(), 'store-owner-id');
  expect(statSync(file).mode & 0o777).toBe(0o600);
  return readFileSync(file, 'utf8').trim();
}

describe('tether serve --store embedded-postgres', () => {
  it('starts PostgreSQL on the data dir, runs a turn, stops it with the daemon, and a second serve reuses the cluster', async () => {
    const first = await serve(['--store', 'embedded-postgres', '--lease-ttl', '5']);
    expect(first.output()).toContain('sessions: embedded PostgreSQL');
    const cluster = clusterRecord();
    const owner = ownerId();
    expect(owner).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    // The server runs while the daemon does: its lock file names it.
    expect(existsSync(path.join(cluster.clusterDirectory, 'postmaster.pid'))).toBe(true);

    fixture.api.enqueue(textReply('Kept in the embedded PostgreSQL.'));
    const run = await tether(['run', 'Hello']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe('Kept in the embedded PostgreSQL.\n');
    const sessionId = sessionIdFrom(run.stderr);
    // Sessions are in PostgreSQL, not in a SQLite file of the data dir.
    expect(existsSync(path.join(dataDir(), 'tether.db'))).toBe(false);

    // The server stopped behind the daemon's back (an administrator, the OOM killer): started again
    // on its port, said on stderr, and the next turn goes through.
    const serverPid = Number(
      readFileSync(path.join(cluster.clusterDirectory, 'postmaster.pid'), 'utf8').split('\n')[0],
    );
    process.kill(serverPid, 'SIGINT');
    await vi.waitFor(() => expect(first.output()).toContain('the embedded PostgreSQL server exited'), {
      timeout: 20_000,
    });
    await vi.waitFor(() => expect(first.output()).toContain('was started again'), { timeout: 20_000 });
    fixture.api.enqueue(textReply('After the restart.'));
    const again = await tether(['run', '--resume', sessionId, 'Again']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toBe('After the restart.\n');

    // SIGHUP (a closed terminal) takes the daemon's graceful path, which stops the server too.
    await stopTether(first.child, 'SIGHUP');
    expect(first.child.exitCode).toBe(0);
    expect(existsSync(path.join(cluster.clusterDirectory, 'postmaster.pid'))).toBe(false);

    // As a shell job at a terminal: Ctrl-C reaches every process of its group. The server is in a
    // group of its own, so the daemon shuts down on a database that is still there, then stops it.
    const second = await daemons.start(['--store', 'embedded-postgres'], environment(), { ownProcessGroup: true });
    // The same cluster, password and owner: nothing was made anew.
    expect(clusterRecord()).toEqual(cluster);
    expect(ownerId()).toBe(owner);
    const listed = await tether(['sessions', '--json']);
    expect(listed.code, listed.stderr).toBe(0);
    const sessions = JSON.parse(listed.stdout) as { sessionId: string; lastRun?: { outcome?: string } }[];
    expect(sessions.map((session) => [session.sessionId, session.lastRun?.outcome])).toEqual([
      [sessionId, 'succeeded'],
    ]);

    const secondClosed = new Promise((resolve) => second.child.once('close', resolve));
    process.kill(-second.child.pid!, 'SIGINT');
    await secondClosed;
    expect(second.child.exitCode, second.output()).toBe(0);
    expect(second.output()).not.toContain('store_failure');
    expect(existsSync(path.join(cluster.clusterDirectory, 'postmaster.pid'))).toBe(false);
    for (const output of [first.output(), second.output(), run.stdout, run.stderr, listed.stderr])
      expect(output).not.toContain(cluster.password);
  });

  // The exit watch reads /proc: Linux only.
  it.runIf(process.platform === 'linux')(
    'a daemon SIGKILLed takes its PostgreSQL server with it: the next serve starts on the same cluster',
    async () => {
      const first = await serve(['--store', 'embedded-postgres']);
      const cluster = clusterRecord();
      const serverPid = Number(
        readFileSync(path.join(cluster.clusterDirectory, 'postmaster.pid'), 'utf8').split('\n')[0],
      );
      const killed = new Promise((resolve) => first.child.once('close', resolve));
      first.child.kill('SIGKILL');
      await killed;
      // No code of the daemon's runs any more: its exit watch ends the server.
      await vi.waitFor(() => expect(isAlive(serverPid)).toBe(false), { timeout: 15_000 });
      const second = await serve(['--store', 'embedded-postgres']);
      expect(second.output()).toContain('sessions: embedded PostgreSQL');
      expect(clusterRecord()).toEqual(cluster);
    },
  );

  it('tether run --store embedded-postgres runs a turn in-process on the same cluster', async () => {
    fixture.api.enqueue(textReply('In-process, embedded.'));
    const run = await tether(['run', '--store', 'embedded-postgres', 'Hello']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe('In-process, embedded.\n');
    const cluster = clusterRecord();
    // The server ended with the command.
    expect(existsSync(path.join(cluster.clusterDirectory, 'postmaster.pid'))).toBe(false);
    const listed = await tether(['sessions', '--store', 'embedded-postgres', '--json']);
    expect(listed.code, listed.stderr).toBe(0);
    expect((JSON.parse(listed.stdout) as { sessionId: string }[]).map((session) => session.sessionId)).toEqual([
      sessionIdFrom(run.stderr),
    ]);
    // Without --store the data dir is not shown as an empty SQLite store: the way to its sessions is said.
    const withoutStore = await tether(['sessions']);
    expect(withoutStore.code).toBe(2);
    expect(withoutStore.stderr).toContain('Pass --store embedded-postgres (its own cluster) to reach them');

    // The cluster gone (a volume not mounted): said, never replaced by an empty one that lists no session.
    await rm(cluster.clusterDirectory, { recursive: true, force: true });
    const gone = await tether(['sessions', '--store', 'embedded-postgres']);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain(`The embedded PostgreSQL cluster ${cluster.clusterDirectory}`);
    expect(gone.stderr).toContain('is gone');
    expect(existsSync(cluster.clusterDirectory)).toBe(false);
  });
});

describe('tether serve options for a shared store', () => {
  it('refuses a bad --lease-ttl or --advertise-url as a usage error, starting nothing', async () => {
    for (const [option, value, expected] of [
      ['--lease-ttl', '0', '--lease-ttl takes a number of seconds from 1 to 3600 (e.g. 15), not "0"'],
      ['--lease-ttl', 'soon', 'not "soon"'],
      ['--lease-ttl', '7200', 'not "7200"'],
      ['--lease-ttl', '1e1', 'not "1e1"'],
      ['--lease-ttl', '0x10', 'not "0x10"'],
      // Valid, but for a store no other daemon shares (none given here: the data dir's SQLite).
      ['--lease-ttl', '15', '--lease-ttl is for sessions kept in PostgreSQL'],
      ['--advertise-url', 'ftp://10.0.0.5', '--advertise-url takes an http:// or https:// URL'],
      ['--advertise-url', 'http://user:secret@10.0.0.5', 'with no user or password'],
    ] as const) {
      const result = await tether(['serve', '--port', '0', '--no-web', option, value]);
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toContain(expected);
      expect(result.stderr).not.toContain('secret');
    }
    expect(existsSync(path.join(dataDir(), 'daemon.json'))).toBe(false);
    const help = await tether(['serve', '--help']);
    expect(help.stdout).toContain('--lease-ttl SECONDS');
    expect(help.stdout).toContain('--store embedded-postgres');
  });
});
