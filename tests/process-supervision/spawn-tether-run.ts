import { type ChildProcess, type StdioOptions, spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ClaudeTestEnvironment } from '@tether/testkit';

const tetherBin = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../packages/cli/bin/tether.js');

/**
 * `tether run --json --data-dir DATA_DIR --cwd WORKSPACE ARGS`, started as a user would, on the test
 * environment's claude and fake API: for tests that kill Tether itself mid-run.
 */
export function spawnTetherRun(
  environment: ClaudeTestEnvironment,
  dataDir: string,
  args: readonly string[],
  stdio: StdioOptions = ['ignore', 'pipe', 'pipe'],
): ChildProcess {
  return spawn(
    process.execPath,
    [tetherBin, 'run', '--json', '--data-dir', dataDir, '--cwd', environment.workspace, ...args],
    { env: { ...environment.environment, TETHER_CLAUDE_PATH: environment.claudePath }, stdio },
  );
}
