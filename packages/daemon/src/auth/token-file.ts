import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { AgentError } from '@tether/protocol';
import { ensureDataDirectory, readPrivateDataFile } from '@tether/store-sqlite';
import { writePrivateFile } from './private-files.js';

export const tokenFileName = 'daemon-token';

// A recognisable prefix lets secret scanners and humans tell a Tether token from other strings.
const tokenPrefix = 'tether_';

// Whoever could write or read the file may know (or have chosen) its token: a new one is the fix.
const untrustedTokenRemedy = 'Run `tether token --rotate` to replace it with a new private token.';

export function tokenFilePath(dataDir: string): string {
  return path.join(path.resolve(dataDir), tokenFileName);
}

export function generateToken(): string {
  return tokenPrefix + randomBytes(32).toString('base64url');
}

/** The token text in a file's content, or null when the content holds none. */
export function parseTokenFile(content: string): string | null {
  const token = content.trim();
  return token.length > 0 && !/\s/.test(token) ? token : null;
}

/**
 * The token from the token file, or null when there is none yet (no daemon ever started here).
 * Only a file that is ours alone (mode 0600) is read: one owned by another user, or readable by
 * others, is refused with data_dir_unsafe, so no local command ever uses a token someone planted.
 */
export async function readToken(dataDir: string): Promise<string | null> {
  const content = readPrivateDataFile(tokenFilePath(dataDir), untrustedTokenRemedy);
  return content === null ? null : parseTokenFile(content);
}

/** The token a daemon starts with, and why the file's old token was discarded (a data_dir_unsafe reason; null when it was kept). */
export interface StartToken {
  readonly token: string;
  readonly replaced: string | null;
}

/**
 * The existing token, or a new one written to the file. A token file that is not ours alone is
 * never used: its token may be known to (or chosen by) someone else, so it is replaced by a new one.
 */
export async function ensureToken(dataDir: string): Promise<StartToken> {
  let existing: string | null;
  try {
    existing = await readToken(dataDir);
  } catch (error) {
    if (!AgentError.isInstance(error) || error.code !== 'data_dir_unsafe') throw error;
    return { token: await rotateToken(dataDir), replaced: error.details?.reason ?? 'file_not_private' };
  }
  return existing === null
    ? { token: await rotateToken(dataDir), replaced: null }
    : { token: existing, replaced: null };
}

/**
 * Replaces the token with a new one and returns it. A daemon running on this data directory notices
 * the change at once: the old token stops working, and open streams and sockets are closed.
 */
export async function rotateToken(dataDir: string): Promise<string> {
  ensureDataDirectory(path.resolve(dataDir));
  const token = generateToken();
  await writePrivateFile(tokenFilePath(dataDir), `${token}\n`);
  return token;
}
