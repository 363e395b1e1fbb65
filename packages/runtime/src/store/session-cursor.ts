import { checkSessionPosition } from '@tether/protocol';
import type { SessionPosition } from './tether-store.js';

/**
 * A page's cursor: the position of its last session, which the next page starts after. Opaque to
 * clients (base64url of `[createdAt, sessionId]`); every surface that pages sessions reads it here.
 */
export function encodeSessionCursor(position: SessionPosition): string {
  return Buffer.from(JSON.stringify([position.createdAt, position.sessionId])).toString('base64url');
}

/**
 * The position a cursor names. Anything not made by encodeSessionCursor is invalid_command
 * (`invalid_cursor`) with `refusal` as its message: each surface names its own cursor.
 */
export function decodeSessionCursor(cursor: string, refusal: string): SessionPosition {
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    decoded = undefined;
  }
  const [createdAt, sessionId] = Array.isArray(decoded) && decoded.length === 2 ? decoded : [];
  return checkSessionPosition({ createdAt, sessionId }, refusal);
}
