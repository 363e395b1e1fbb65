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
  /** Everything the last one started wrote so far: its JSON log (stdout) and its messages (stderr). */
  output(): string;
}

/** Registers the clean-up after each test; call at the top of a test file, after useCommandFixture. */
export function useTetherServe(fixture: CommandFixture): TetherServe {
  let child: ChildProcess | undefined;
  let output = '';
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
        output = '';
        let stderr = '';
        started.stdout!.setEncoding('utf8');
        started.stderr!.setEncoding('utf8');
        started.stdout!.on('data', (chunk) => {
          output += chunk;
        });
        started.stderr!.on('data', (chunk) => {
          output += chunk;
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
    output: () => output,
  };
}

/** A `tether serve` a test started with useTetherDaemons. */
export interface ServedTether {
  readonly child: ChildProcess;
  readonly url: string;
  /** Everything it wrote so far, stdout (its JSON log) and stderr. */
  output(): string;
}

/**
 * Several `tether serve` per test, each with an environment of its own (another data dir, a store
 * URL): start() resolves once it listens; all are stopped (SIGTERM, awaited) after each test.
 */
export function useTetherDaemons(fixture: CommandFixture): {
  /** ownProcessGroup: a group of its own, as a shell's job, so a test can signal the whole group (a terminal's Ctrl-C). */
  start(
    args: readonly string[],
    environment: Record<string, string>,
    options?: { readonly ownProcessGroup?: boolean },
  ): Promise<ServedTether>;
} {
  const started: ChildProcess[] = [];
  afterEach(async () => {
    await Promise.all(started.splice(0).map((child) => stopTether(child, 'SIGTERM')));
  });
  return {
    start(args, environment, options = {}) {
      return new Promise((resolve, reject) => {
        const child = spawn(process.execPath, [tetherBin, 'serve', '--port', '0', '--no-web', ...args], {
          cwd: fixture.root,
          env: environment,
          stdio: ['ignore', 'pipe', 'pipe'],
          detached: options.ownProcessGroup === true,
        });
        started.push(child);
        let output = '';
        child.stdout!.setEncoding('utf8');
        child.stderr!.setEncoding('utf8');
        const collect = (chunk: string) => {
          output += chunk;
          const match = /listening on (http:\/\/\S+)/.exec(output);
          if (match) resolve({ child, url: match[1]!, output: () => output });
        };
        child.stdout!.on('data', collect);
        child.stderr!.on('data', collect);
        child.on('error', reject);
        child.on('close', (code) => reject(new Error(`tether serve exited (${code}): ${output}`)));
      });
    },
  };
}

/** Sends `signal` to a `tether serve` still running and waits for it to exit. */
export async function stopTether(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const closed = new Promise((resolve) => child.once('close', resolve));
  child.kill(signal);
  await closed;
}
