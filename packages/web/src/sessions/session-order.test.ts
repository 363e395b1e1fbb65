import type { SessionSnapshot } from '@tether/protocol';
import { describe, expect, it } from 'vitest';
import { orderSessions, sessionStatus } from './session-order.js';

function snapshot(id: string, state: SessionSnapshot['state'], updatedAt: string): SessionSnapshot {
  return {
    sessionId: `ses_${id.repeat(32)}`,
    provider: 'claude',
    state,
    workspace: { kind: 'directory', path: '/repo' },
    configuration: {},
    ephemeral: false,
    activeRunId: null,
    model: null,
    permissionMode: null,
    pendingInteractions: [],
    providerSessionId: null,
    usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheCreationTokens: 0, costUsd: null },
    title: null,
    lastRun: null,
    lastSeq: 1,
    createdAt: updatedAt,
    updatedAt,
    lastActivityAt: updatedAt,
  };
}

describe('the session list order', () => {
  it('puts waiting-for-you first, then running, then by last activity, closed last', () => {
    const items = [
      snapshot('1', 'idle', '2026-12-01T10:00:05Z'),
      snapshot('2', 'closed', '2026-12-01T10:00:09Z'),
      snapshot('3', 'running', '2026-12-01T10:00:01Z'),
      snapshot('4', 'waiting', '2026-12-01T10:00:00Z'),
      snapshot('5', 'idle', '2026-12-01T10:00:07Z'),
    ].map((item) => ({ snapshot: item, status: sessionStatus(item, undefined) }));
    expect(orderSessions(items).map((item) => item.snapshot.sessionId[4])).toEqual(['4', '3', '5', '1', '2']);
  });

  it('calls an idle session whose last run failed "failed"', () => {
    const idle = snapshot('1', 'idle', '2026-12-01T10:00:00Z');
    expect(sessionStatus(idle, { title: null, lastOutcome: 'failed', checkedSeq: 1 })).toBe('failed');
    expect(sessionStatus(idle, { title: null, lastOutcome: 'succeeded', checkedSeq: 1 })).toBe('idle');
    expect(sessionStatus(snapshot('1', 'waiting', 'x'), { title: null, lastOutcome: 'failed', checkedSeq: 1 })).toBe('waiting');
  });
});
