import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Compares two secrets in time that does not depend on where they differ. Hashing first gives both
 * sides the same length, so not even the length of the expected token leaks.
 */
export function secretsEqual(presented: string, expected: string): boolean {
  const left = createHash('sha256').update(presented).digest();
  const right = createHash('sha256').update(expected).digest();
  return timingSafeEqual(left, right);
}

/** The token of an `Authorization: Bearer <token>` header, or null. */
export function bearerToken(header: string | undefined | null): string | null {
  if (!header) return null;
  const match = /^Bearer +(\S+) *$/i.exec(header);
  return match ? match[1]! : null;
}
