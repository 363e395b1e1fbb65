import { describe, expect, it } from 'vitest';
import { parseRoute, sessionDiffPath, sessionPath } from './use-route.js';

const sessionId = `ses_${'0123456789abcdef'.repeat(2)}`;

describe('the routes', () => {
  it('reads the session, its diff, the form and the list from the path, and writes them back', () => {
    expect(parseRoute(sessionPath(sessionId))).toEqual({ name: 'session', sessionId });
    expect(parseRoute(sessionDiffPath(sessionId))).toEqual({ name: 'diff', sessionId });
    expect(parseRoute(`${sessionDiffPath(sessionId)}/`)).toEqual({ name: 'diff', sessionId });
    expect(parseRoute('/new')).toEqual({ name: 'new' });
    expect(parseRoute(`/sessions/${sessionId}/other`)).toEqual({ name: 'list' });
    expect(parseRoute('/')).toEqual({ name: 'list' });
  });
});
