import { SessionState, type SessionSnapshot } from '@tether/protocol';
import { newestFirst } from '@tether/runtime';
import { z } from 'zod';
import { invalidRequest } from '../errors/error-response.js';

export const defaultPageLimit = 50;
export const maxPageLimit = 500;

/** Where a page starts: after this session in newest-first order. Opaque to clients. */
interface CursorPosition {
  readonly createdAt: string;
  readonly sessionId: string;
}

const CursorShape = z.tuple([z.string().max(100), z.string().max(100)]);

export function encodeCursor(position: CursorPosition): string {
  return Buffer.from(JSON.stringify([position.createdAt, position.sessionId])).toString('base64url');
}

export function decodeCursor(cursor: string): CursorPosition {
  try {
    const [createdAt, sessionId] = CursorShape.parse(JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')));
    return { createdAt, sessionId };
  } catch {
    throw invalidRequest(
      'The "before" cursor is not one this daemon gave out. Use the "next" value of a previous page, or leave it out.',
      'invalid_cursor',
    );
  }
}

export interface PageQuery {
  readonly state?: SessionState;
  readonly limit: number;
  readonly before?: CursorPosition;
}

/** Reads ?state, ?limit and ?before; anything malformed is invalid_command. A limit above the maximum is capped. */
export function parsePageQuery(query: {
  state?: string | undefined;
  limit?: string | undefined;
  before?: string | undefined;
}): PageQuery {
  let state: SessionState | undefined;
  if (query.state !== undefined) {
    const parsed = SessionState.safeParse(query.state);
    if (!parsed.success)
      throw invalidRequest(`"state" must be one of ${SessionState.options.join(', ')}.`, 'invalid_state');
    state = parsed.data;
  }
  let limit = defaultPageLimit;
  if (query.limit !== undefined) {
    if (!/^\d{1,6}$/.test(query.limit) || Number(query.limit) < 1)
      throw invalidRequest(`"limit" must be a whole number from 1 to ${maxPageLimit}.`, 'invalid_limit');
    limit = Math.min(Number(query.limit), maxPageLimit);
  }
  return {
    limit,
    ...(state ? { state } : {}),
    ...(query.before !== undefined ? { before: decodeCursor(query.before) } : {}),
  };
}

/**
 * One page of sessions, newest first (createdAt, then id, the runtime's order), and the cursor of
 * the next page (null on the last). Given the runtime's page of limit + 1, it only cuts it.
 */
export function pageSessions(
  sessions: readonly SessionSnapshot[],
  query: PageQuery,
): { sessions: SessionSnapshot[]; next: string | null } {
  const matching = sessions
    .filter((session) => query.state === undefined || session.state === query.state)
    .filter((session) => query.before === undefined || newestFirst(session, query.before) > 0)
    .sort(newestFirst);
  const page = matching.slice(0, query.limit);
  const last = page.at(-1);
  return { sessions: page, next: matching.length > page.length && last ? encodeCursor(last) : null };
}
