import { statSync } from 'node:fs';

/**
 * Binaries whose version check passed, for the whole process: a daemon that restarts its runtime, or a
 * host that creates a runtime per job, would otherwise run `claude --version` again before its first
 * session starts (~10 ms on the cold path each time). Keyed by the file's identity, so a binary
 * replaced or updated in place is checked again. Refusals are never kept.
 */
const passed = new Set<string>();

/** The file's identity: its path and what changes when it is replaced or rewritten. Null when it cannot be read. */
export function binaryIdentity(binaryPath: string): string | null {
  try {
    const file = statSync(binaryPath);
    return `${binaryPath}\0${file.dev}:${file.ino}:${file.size}:${file.mtimeMs}`;
  } catch {
    return null;
  }
}

export function versionCheckPassed(binaryPath: string): boolean {
  const identity = binaryIdentity(binaryPath);
  return identity !== null && passed.has(identity);
}

export function rememberVersionCheckPassed(binaryPath: string): void {
  const identity = binaryIdentity(binaryPath);
  if (identity !== null) passed.add(identity);
}
