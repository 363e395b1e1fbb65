import { randomBytes } from 'node:crypto';
import { chmod, readFile } from 'node:fs/promises';
import path from 'node:path';
import { ensurePrivateDirectory, writePrivateFile } from './private-files.js';

export const tokenFileName = 'daemon-token';

// A recognisable prefix lets secret scanners and humans tell a Tether token from other strings.
const tokenPrefix = 'tether_';

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

/** The daemon's current token, or null when none was generated yet (no daemon ever started here). */
export async function readToken(dataDir: string): Promise<string | null> {
  try {
    return parseTokenFile(await readFile(tokenFilePath(dataDir), 'utf8'));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

/** The existing token (its file made 0600 again if it was widened), or a new one written to the file. */
export async function ensureToken(dataDir: string): Promise<string> {
  await ensurePrivateDirectory(path.resolve(dataDir));
  const existing = await readToken(dataDir);
  if (existing !== null) {
    await chmod(tokenFilePath(dataDir), 0o600);
    return existing;
  }
  return rotateToken(dataDir);
}

/**
 * Replaces the token with a new one and returns it. A daemon running on this data directory notices
 * the change at once: the old token stops working, and open streams and sockets are closed.
 */
export async function rotateToken(dataDir: string): Promise<string> {
  await ensurePrivateDirectory(path.resolve(dataDir));
  const token = generateToken();
  await writePrivateFile(tokenFilePath(dataDir), `${token}\n`);
  return token;
}
