import type { SessionPosition } from './tether-store.js';

/**
 * Newest first: by createdAt, then by id, so sessions created in the same millisecond keep a stable
 * order (the order pages and cursors rely on). Code-unit comparison, as SQLite's BINARY collation
 * orders the same ASCII strings.
 */
export function newestFirst(left: SessionPosition, right: SessionPosition): number {
  if (left.createdAt !== right.createdAt) return left.createdAt < right.createdAt ? 1 : -1;
  if (left.sessionId === right.sessionId) return 0;
  return left.sessionId < right.sessionId ? 1 : -1;
}

/** Whether a session comes after the position in newest-first order (no position: every session does). */
export function isAfter(session: SessionPosition, position: SessionPosition | undefined): boolean {
  return position === undefined || newestFirst(session, position) > 0;
}
