/**
 * Starts bench/store-scale-out-worker.mjs as a separate Node process (a "daemon" with its own
 * store) and talks to it over IPC: request(message) resolves with its answer, stop() ends it (stdin
 * EOF: the worker closes its store and exits; SIGKILL after 10 s).
 */
import { fork } from 'node:child_process';
import path from 'node:path';

export async function startStoreWorker({ repoRoot, name }) {
  const child = fork(path.join(repoRoot, 'bench', 'store-scale-out-worker.mjs'), [], {
    cwd: repoRoot,
    stdio: ['pipe', 'inherit', 'inherit', 'ipc'],
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const pending = new Map();
  let nextId = 1;
  let failure = null;
  child.on('message', (message) => {
    const waiter = pending.get(message?.id);
    if (!waiter) return;
    pending.delete(message.id);
    waiter(message);
  });
  child.once('exit', (code, signal) => {
    failure = new Error(`store worker ${name} exited (code ${code}, signal ${signal})`);
    for (const waiter of pending.values()) waiter({ ok: false, error: failure.message });
    pending.clear();
  });
  const ready = new Promise((resolve) => pending.set(0, resolve));
  const request = (message, timeoutMs = 60_000) =>
    new Promise((resolve, reject) => {
      if (failure) return reject(failure);
      const id = nextId++;
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(new Error(`store worker ${name}: no answer to ${message.type} within ${timeoutMs} ms`));
      }, timeoutMs);
      pending.set(id, (answer) => {
        clearTimeout(timer);
        if (answer.ok) resolve(answer);
        else reject(new Error(`store worker ${name}: ${message.type} failed: ${answer.error}`));
      });
      child.send({ ...message, id });
    });
  const started = await ready;
  if (!started.ok) throw new Error(`store worker ${name} did not start: ${started.error}`);
  return {
    name,
    pid: child.pid,
    request,
    async stop() {
      child.stdin.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
