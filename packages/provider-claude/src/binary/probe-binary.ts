import { execFile } from 'node:child_process';
import { AgentError, toAgentError } from '@tether/protocol';
import type { AgentProviderV1Availability } from '@tether/provider-spec';
import { cliTooOld } from './cli-version-window.js';
import { resolveClaudeBinary } from './resolve-binary.js';

export interface ProbeOptions {
  readonly explicitPath?: string | undefined;
  readonly environment: Readonly<Record<string, string | undefined>>;
  readonly timeoutMs?: number | undefined;
}

/** What `claude --version` printed (its first line), or why it could not be asked. Never throws. */
export function readClaudeVersion(
  binaryPath: string,
  options: { environment: Readonly<Record<string, string | undefined>>; timeoutMs?: number | undefined },
): Promise<{ version: string } | { problem: AgentError }> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  return new Promise((resolve) => {
    const child = execFile(
      binaryPath,
      ['--version'],
      {
        timeout: timeoutMs,
        encoding: 'utf8',
        env: { PATH: options.environment.PATH ?? '', HOME: options.environment.HOME ?? '' },
        maxBuffer: 64 * 1024,
      },
      (error, stdout) => {
        if (!error) {
          resolve({ version: stdout.trim().split('\n')[0]?.slice(0, 100) ?? '' });
          return;
        }
        const timedOut = (error as NodeJS.ErrnoException & { killed?: boolean }).killed === true;
        resolve({
          problem: new AgentError({
            code: 'provider_unavailable',
            message: timedOut
              ? `${binaryPath} --version did not answer within ${timeoutMs} ms. Check that it is a working claude CLI.`
              : `${binaryPath} --version failed. Check that it is a working claude CLI (reinstall Claude Code if needed).`,
            details: { binaryPath, reason: timedOut ? 'version_timeout' : 'version_failed' },
          }),
        });
      },
    );
    // Nothing is asked on stdin: a binary that reads it sees EOF instead of waiting for the timeout.
    child.stdin?.end();
  });
}

/** Finds the binary, asks its version (bounded by a timeout) and checks it against the supported floor. Never throws. */
export async function probeClaudeBinary(options: ProbeOptions): Promise<AgentProviderV1Availability> {
  let resolved;
  try {
    resolved = resolveClaudeBinary({ explicitPath: options.explicitPath, environment: options.environment });
  } catch (error) {
    return { available: false, problem: toAgentError(error).toObject() };
  }
  const found = { binaryPath: resolved.path, source: resolved.source };
  const answer = await readClaudeVersion(resolved.path, options);
  if ('problem' in answer) return { available: false, ...found, problem: answer.problem.toObject() };
  const tooOld = cliTooOld(resolved.path, answer.version);
  if (tooOld) return { available: false, ...found, version: answer.version, problem: tooOld.toObject() };
  return { available: true, ...found, version: answer.version };
}
