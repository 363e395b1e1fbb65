import type { SessionSnapshot } from '@tether/protocol';
import { describe, expect, it } from 'vitest';
import { pageSessions, parsePageQuery } from './session-page.js';

function session(id: number, createdAt: string, state: SessionSnapshot['state'] = 'idle'): SessionSnapshot {
  return { sessionId: `ses_${String(id).padStart(32, '0')}`, createdAt, state } as SessionSnapshot;
}

const sessions = [
  session(1, '2026-01-01T00:00:01.000Z'),
  session(2, '2026-01-01T00:00:03.000Z', 'closed'),
  session(3, '2026-01-01T00:00:02.000Z'),
  // Same millisecond as 3: the id breaks the tie, so no page skips or repeats one.
  session(4, '2026-01-01T00:00:02.000Z', 'running'),
];

describe('session pages', () => {
  it('go newest first and the cursor continues exactly where the last page stopped', () => {
    const first = pageSessions(sessions, parsePageQuery({ limit: '2' }));
    expect(first.sessions.map((item) => item.sessionId.slice(-1))).toEqual(['2', '4']);
    const second = pageSessions(sessions, parsePageQuery({ limit: '2', before: first.next! }));
    expect(second.sessions.map((item) => item.sessionId.slice(-1))).toEqual(['3', '1']);
    expect(second.next).toBeNull();
  });

  it('filter by state, default to 50 and cap the limit at 500', () => {
    expect(
      pageSessions(sessions, parsePageQuery({ state: 'closed' })).sessions.map((item) => item.sessionId.slice(-1)),
    ).toEqual(['2']);
    expect(parsePageQuery({}).limit).toBe(50);
    expect(parsePageQuery({ limit: '100000' }).limit).toBe(500);
  });

  it('refuse a cursor the daemon did not give out, naming ?before', () => {
    for (const bad of ['garbage', Buffer.from('{"a":1}').toString('base64url'), '']) {
      expect(() => parsePageQuery({ before: bad })).toThrow(
        expect.objectContaining({
          code: 'invalid_command',
          message: expect.stringContaining('The "before" cursor is not one this daemon gave out'),
          details: { reason: 'invalid_cursor' },
        }),
      );
    }
    // The reasons runtime.listSessions gives for the same mistakes (the protocol's read-queries rules).
    for (const [query, reason] of [
      [{ state: 'asleep' }, 'invalid_state'],
      [{ limit: '0' }, 'invalid_limit'],
      [{ limit: '-3' }, 'invalid_limit'],
      [{ limit: 'ten' }, 'invalid_limit'],
    ] as const) {
      expect(() => parsePageQuery(query)).toThrow(
        expect.objectContaining({ code: 'invalid_command', details: { reason } }),
      );
    }
  });
});
