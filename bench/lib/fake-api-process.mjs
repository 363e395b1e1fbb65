/** The bench's fake Anthropic API (bench/fake-api-server.mjs) as a child process of the caller. */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';

/** The fake API in its own process; resolves once it printed its URL. */
export async function startFakeApiProcess(repoRoot, deltas) {
  const child = spawn(process.execPath, [path.join(repoRoot, 'bench', 'fake-api-server.mjs')], {
    cwd: repoRoot,
    env: { ...process.env, BENCH_DELTAS: String(deltas) },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  try {
    const info = await new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error('the fake API process did not report its URL within 15 s')),
        15_000,
      );
      child.once('error', (error) => reject(new Error(`could not start the fake API process: ${error.message}`)));
      child.once('exit', (code) => reject(new Error(`the fake API process exited early (code ${code})`)));
      createInterface({ input: child.stdout }).once('line', (line) => {
        clearTimeout(timer);
        resolve(JSON.parse(line));
      });
    });
    return {
      ...info,
      async stop() {
        child.stdin.end();
        const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
        await exited;
        clearTimeout(timer);
      },
    };
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
}
