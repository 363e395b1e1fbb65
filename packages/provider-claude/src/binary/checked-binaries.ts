import { statSync } from 'node:fs';

/**
 * Binaries whose version check passed, for the whole process: a daemon that restarts its runtime, or a
 * host that creates a runtime per job, would otherwise run `claude --version` again before its first
 * session starts (~10 ms on the cold path each time). Keyed by the file's identity, so a binary
 * replaced or updated in place is checked again. Refusals are never kept.
 */
const passed = new Map<string, string>();

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

/** `version`: what the binary said of itself (`2.1.332 (Claude Code)`) or its package told. */
export function rememberVersionCheckPassed(binaryPath: string, version: string): void {
  const identity = binaryIdentity(binaryPath);
  if (identity !== null) passed.set(identity, /^\d+\.\d+\.\d+\S*/.exec(version)?.[0] ?? version);
}

/** The version of a binary whose check passed (`2.1.332`): what its model list reports when an agent's answer leaves it out. */
export function checkedVersion(binaryPath: string): string | null {
  const identity = binaryIdentity(binaryPath);
  return (identity !== null && passed.get(identity)) || null;
}
