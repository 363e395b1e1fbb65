import { accessSync, constants, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { AgentError } from '@tether/protocol';

export type BinarySource = 'option' | 'environment' | 'path' | 'install-location' | 'bundled';

export interface ResolvedBinary {
  readonly path: string;
  readonly source: BinarySource;
}

export interface ResolveOptions {
  /** An explicit path: used as given, never silently replaced by another binary. */
  readonly explicitPath?: string | undefined;
  readonly environment: Readonly<Record<string, string | undefined>>;
  readonly platform?: NodeJS.Platform;
}

const executableName = process.platform === 'win32' ? 'claude.exe' : 'claude';

function isExecutableFile(candidate: string): boolean {
  try {
    if (!statSync(candidate).isFile()) return false;
    accessSync(candidate, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Where claude usually lives when a GUI- or service-launched host has a minimal PATH:
 * the native installer, the old local install, npm's global bin, Homebrew and /usr/local.
 */
export function usualInstallDirectories(environment: Readonly<Record<string, string | undefined>>): string[] {
  const home = environment.HOME ?? os.homedir();
  const npmPrefix = environment.npm_config_prefix ?? environment.NPM_CONFIG_PREFIX;
  return [
    path.join(home, '.local', 'bin'),
    path.join(home, '.claude', 'local'),
    ...(npmPrefix ? [path.join(npmPrefix, 'bin')] : []),
    path.join(home, '.npm-global', 'bin'),
    path.dirname(process.execPath),
    path.join(home, '.bun', 'bin'),
    '/opt/homebrew/bin',
    '/usr/local/bin',
  ];
}

/** The Agent SDK's package that carries the claude binary for this platform. */
export const bundledBinaryPackage = `@anthropic-ai/claude-agent-sdk-${process.platform}-${process.arch}`;

/** The binary shipped by @anthropic-ai/claude-agent-sdk's platform package, if installed. */
export function bundledBinaryPath(): string | undefined {
  const require = createRequire(import.meta.url);
  try {
    const candidate = path.join(path.dirname(require.resolve(`${bundledBinaryPackage}/package.json`)), executableName);
    return isExecutableFile(candidate) ? candidate : undefined;
  } catch {
    return undefined;
  }
}

function unavailable(message: string, binaryPath?: string): AgentError {
  return new AgentError({
    code: 'provider_unavailable',
    message,
    details: { reason: 'binary_not_found', ...(binaryPath ? { binaryPath } : {}) },
  });
}

/**
 * Finds the claude executable: explicit option → TETHER_CLAUDE_PATH → claude on PATH (plus the
 * usual install locations) → the bundled one. Throws provider_unavailable saying what to do.
 */
export function resolveClaudeBinary(options: ResolveOptions): ResolvedBinary {
  if (options.explicitPath !== undefined) {
    const explicit = path.resolve(options.explicitPath);
    if (isExecutableFile(explicit)) return { path: explicit, source: 'option' };
    throw unavailable(
      `The claude binary given as the claude path (${explicit}) does not exist or is not executable. Fix the path or leave it out to search PATH.`,
      explicit,
    );
  }
  const fromEnvironment = options.environment.TETHER_CLAUDE_PATH;
  if (fromEnvironment) {
    const resolved = path.resolve(fromEnvironment);
    if (isExecutableFile(resolved)) return { path: resolved, source: 'environment' };
    throw unavailable(
      `TETHER_CLAUDE_PATH points at ${resolved}, which does not exist or is not executable. Fix or unset it.`,
      resolved,
    );
  }
  const pathDirectories = (options.environment.PATH ?? '').split(path.delimiter).filter(Boolean);
  for (const directory of pathDirectories) {
    const candidate = path.join(directory, executableName);
    if (isExecutableFile(candidate)) return { path: candidate, source: 'path' };
  }
  for (const directory of usualInstallDirectories(options.environment)) {
    const candidate = path.join(directory, executableName);
    if (isExecutableFile(candidate)) return { path: candidate, source: 'install-location' };
  }
  const bundled = bundledBinaryPath();
  if (bundled) return { path: bundled, source: 'bundled' };
  throw unavailable(
    'The claude CLI was not found on PATH, in the usual install locations or as a bundled package. Install Claude Code (npm install -g @anthropic-ai/claude-code), or set TETHER_CLAUDE_PATH to its path.',
  );
}
