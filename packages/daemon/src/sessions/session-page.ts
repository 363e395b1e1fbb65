import {
  type SessionSnapshot,
  type SessionState,
  checkPageLimit,
  checkSessionState,
  wholeNumberOf,
} from '@tether/protocol';
import { type SessionPosition, decodeSessionCursor, encodeSessionCursor, newestFirst } from '@tether/runtime';

export const defaultPageLimit = 50;
export const maxPageLimit = 500;

const cursorRefusal =
  'The "before" cursor is not one this daemon gave out. Use the "next" value of a previous page, or leave it out.';

export interface PageQuery {
  readonly state?: SessionState;
  readonly limit: number;
  readonly before?: SessionPosition;
}

/**
 * Reads ?state, ?limit and ?before by the protocol's rules for reads (the runtime's own methods keep
 * the same): anything malformed is invalid_command. A limit above the maximum is capped.
 */
export function parsePageQuery(query: {
  state?: string | undefined;
  limit?: string | undefined;
  before?: string | undefined;
}): PageQuery {
  const state = query.state === undefined ? undefined : checkSessionState(query.state);
  const limit = query.limit === undefined ? defaultPageLimit : checkPageLimit(wholeNumberOf(query.limit), maxPageLimit);
  return {
    limit,
    ...(state ? { state } : {}),
    ...(query.before !== undefined ? { before: decodeSessionCursor(query.before, cursorRefusal) } : {}),
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
  return { sessions: page, next: matching.length > page.length && last ? encodeSessionCursor(last) : null };
}
