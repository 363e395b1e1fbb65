import { execFileSync } from 'node:child_process';
import { bundledBinaryPath } from '@tether/provider-claude';

/**
 * The real-binary tests are the ones that matter: if the pinned claude binary is missing,
 * the whole suite fails here, loudly, instead of skipping them.
 */
export default function setup(): void {
  // The binary the pinned @anthropic-ai/claude-agent-sdk devDependency brings, found as the provider finds it.
  const binary = bundledBinaryPath();
  if (binary === undefined) {
    throw new Error(
      `The claude binary for tests is missing: @anthropic-ai/claude-agent-sdk-${process.platform}-${process.arch} is not installed or its claude is not executable. Run "./dev npm ci".`,
    );
  }
  const version = execFileSync(binary, ['--version'], { encoding: 'utf8', timeout: 30_000 }).trim();
  if (!/^\d+\.\d+\.\d+/.test(version))
    throw new Error(`The claude binary at ${binary} did not report a version (got "${version.slice(0, 80)}").`);
}
