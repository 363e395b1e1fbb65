/**
 * bench/daemon-server.mjs in a child process: its URL and token come on stdout, and an IPC channel
 * carries what only the daemon process can read (its event loop, heap, publish stamps, clock).
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';

/** Starts bench/daemon-server.mjs; resolves once it printed {url, token, pid}. */
export async function startDaemonProcess({
  repoRoot,
  claudePath,
  environment,
  maxProcesses,
  stamps = false,
  idleReleaseMs,
  agentNice,
}) {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'tether-bench-daemon-'));
  // BENCH_DAEMON_CPU_PROF=DIR: a V8 CPU profile of each daemon process, written to DIR when it exits (diagnosis only).
  const profile = process.env.BENCH_DAEMON_CPU_PROF
    ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(process.env.BENCH_DAEMON_CPU_PROF)}`]
    : [];
  const child = spawn(
    process.execPath,
    ['--expose-gc', ...profile, path.join(repoRoot, 'bench', 'daemon-server.mjs')],
    {
      cwd: repoRoot,
      env: {
        ...process.env,
        BENCH_DAEMON_CONFIG: JSON.stringify({
          dataDir,
          claudePath,
          environment,
          maxProcesses,
          stamps,
          idleReleaseMs,
          agentNice,
        }),
      },
      stdio: ['pipe', 'pipe', 'inherit', 'ipc'],
    },
  );
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const pending = new Map();
  let nextId = 1;
  child.on('message', (message) => {
    const waiter = pending.get(message?.id);
    if (waiter) {
      pending.delete(message.id);
      waiter(message);
    }
  });
  const request = (message, timeoutMs = 10_000) =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(new Error(`daemon process: no answer to ${message.type} within ${timeoutMs} ms`));
      }, timeoutMs);
      pending.set(id, (answer) => {
        clearTimeout(timer);
        resolve(answer);
      });
      child.send({ ...message, id });
    });
  try {
    const info = await new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error('the daemon process did not report its URL within 20 s')),
        20_000,
      );
      child.once('error', (error) => reject(new Error(`could not start the daemon process: ${error.message}`)));
      child.once('exit', (code) => reject(new Error(`the daemon process exited early (code ${code})`)));
      createInterface({ input: child.stdout }).once('line', (line) => {
        clearTimeout(timer);
        resolve(JSON.parse(line));
      });
    });
    let stopped = null;
    return {
      ...info,
      dataDir,
      request,
      /** Closes the daemon (stdin EOF → daemon.close() → exit); SIGKILL after 15 s. Resolves with the ms it took. */
      stop() {
        stopped ??= (async () => {
          const started = performance.now();
          child.stdin.end();
          const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
          const result = await exited;
          clearTimeout(timer);
          await rm(dataDir, { recursive: true, force: true });
          return { ms: performance.now() - started, ...result };
        })();
        return stopped;
      },
    };
  } catch (error) {
    child.kill('SIGKILL');
    await rm(dataDir, { recursive: true, force: true });
    throw error;
  }
}
