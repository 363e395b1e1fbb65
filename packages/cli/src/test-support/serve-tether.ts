import { type ChildProcess, spawn } from 'node:child_process';
import { afterEach } from 'vitest';
import type { CommandFixture } from './command-fixture.js';
import { tetherBin } from './spawn-tether.js';

/** `tether serve` for the tests of a file: started by serve(), stopped (SIGTERM, then awaited) after each test. */
export interface TetherServe {
  /** Starts `tether serve --port 0 EXTRA` in the fixture; resolves with its URL once it listens. */
  serve(extra?: readonly string[]): Promise<string>;
  /** The running `tether serve`, for a test that signals it itself. */
  readonly child: ChildProcess | undefined;
}

/** Registers the clean-up after each test; call at the top of a test file, after useCommandFixture. */
export function useTetherServe(fixture: CommandFixture): TetherServe {
  let child: ChildProcess | undefined;
  afterEach(async () => {
    if (child && child.exitCode === null) {
      const closed = new Promise((resolve) => child!.once('close', resolve));
      child.kill('SIGTERM');
      await closed;
    }
    child = undefined;
  });
  return {
    serve(extra = []) {
      return new Promise((resolve, reject) => {
        const started = spawn(process.execPath, [tetherBin, 'serve', '--port', '0', ...extra], {
          cwd: fixture.root,
          env: fixture.environment,
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        child = started;
        let stderr = '';
        started.stderr!.on('data', (chunk) => {
          stderr += chunk;
          const match = /listening on (http:\/\/\S+)/.exec(stderr);
          if (match) resolve(match[1]!);
        });
        started.on('error', reject);
        started.on('close', (code) => reject(new Error(`tether serve exited (${code}): ${stderr}`)));
      });
    },
    get child() {
      return child;
    },
  };
}
