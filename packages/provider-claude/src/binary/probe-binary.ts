import { execFile } from 'node:child_process';
import { AgentError, toAgentError } from '@tether/protocol';
import type { AgentProviderV1Availability } from '@tether/provider-spec';
import { resolveClaudeBinary } from './resolve-binary.js';

export interface ProbeOptions {
  readonly explicitPath?: string | undefined;
  readonly environment: Readonly<Record<string, string | undefined>>;
  readonly timeoutMs?: number | undefined;
}

/** Finds the binary and asks its version, bounded by a timeout. Never throws. */
export async function probeClaudeBinary(options: ProbeOptions): Promise<AgentProviderV1Availability> {
  let resolved;
  try {
    resolved = resolveClaudeBinary({ explicitPath: options.explicitPath, environment: options.environment });
  } catch (error) {
    return { available: false, problem: toAgentError(error).toObject() };
  }
  const timeoutMs = options.timeoutMs ?? 10_000;
  return new Promise((resolve) => {
    execFile(resolved.path, ['--version'], { timeout: timeoutMs, encoding: 'utf8', env: { PATH: options.environment.PATH ?? '', HOME: options.environment.HOME ?? '' }, maxBuffer: 64 * 1024 }, (error, stdout) => {
      if (error) {
        const timedOut = (error as NodeJS.ErrnoException & { killed?: boolean }).killed === true;
        resolve({
          available: false,
          binaryPath: resolved.path,
          source: resolved.source,
          problem: new AgentError({
            code: 'provider_unavailable',
            message: timedOut
              ? `${resolved.path} --version did not answer within ${timeoutMs} ms. Check that it is a working claude CLI.`
              : `${resolved.path} --version failed. Check that it is a working claude CLI (reinstall Claude Code if needed).`,
            details: { binaryPath: resolved.path, reason: timedOut ? 'version_timeout' : 'version_failed' },
          }).toObject(),
        });
        return;
      }
      const version = stdout.trim().split('\n')[0]?.slice(0, 100) ?? '';
      resolve({ available: true, binaryPath: resolved.path, source: resolved.source, version });
    });
  });
}
