import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

/**
 * The real-binary tests are the ones that matter: if the pinned claude binary is missing,
 * the whole suite fails here, loudly, instead of skipping them.
 */
export default function setup(): void {
  const require = createRequire(import.meta.url);
  const packageName = `@anthropic-ai/claude-agent-sdk-${process.platform}-${process.arch}`;
  let binary: string;
  try {
    binary = path.join(path.dirname(require.resolve(`${packageName}/package.json`)), process.platform === 'win32' ? 'claude.exe' : 'claude');
  } catch {
    throw new Error(`The claude binary for tests is missing: ${packageName} is not installed. Run "./dev npm ci" (it comes with the pinned @anthropic-ai/claude-agent-sdk devDependency).`);
  }
  if (!existsSync(binary)) throw new Error(`The claude binary for tests is missing at ${binary}. Run "./dev npm ci".`);
  const version = execFileSync(binary, ['--version'], { encoding: 'utf8', timeout: 30_000 }).trim();
  if (!/^\d+\.\d+\.\d+/.test(version)) throw new Error(`The claude binary at ${binary} did not report a version (got "${version.slice(0, 80)}").`);
  process.env.TETHER_TEST_CLAUDE_PATH = binary;
}
