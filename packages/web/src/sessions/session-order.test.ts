import type { SessionSnapshot } from '@tether/protocol';
import { describe, expect, it } from 'vitest';
import { mergeSessionPages, orderSessions, sessionStatus, sessionTitle } from './session-order.js';

const runId = `run_${'f'.repeat(32)}`;

function snapshot(
  id: string,
  state: SessionSnapshot['state'],
  lastActivityAt: string,
  overrides: Partial<SessionSnapshot> = {},
): SessionSnapshot {
  return {
    sessionId: `ses_${id.repeat(32)}`,
    provider: 'claude',
    state,
    workspace: { kind: 'directory', path: '/repo' },
    workspaceStatus: null,
    configuration: {},
    ephemeral: false,
    activeRunId: null,
    model: null,
    permissionMode: null,
    modesRequiringRestart: [],
    pendingInteractions: [],
    queuedInputs: [],
    limits: null,
    contextUsage: null,
    providerSessionId: null,
    forkedFrom: null,
    usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheCreationTokens: 0, costUsd: null },
    title: null,
    lastRun: null,
    lastSeq: 1,
    createdAt: '2026-12-01T09:00:00Z',
    // Deliberately unrelated to the order: the list sorts by activity, not by the last change of settings.
    updatedAt: `2026-12-01T10:00:0${9 - Number(id)}Z`,
    lastActivityAt,
    ...overrides,
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
    ].map((item) => ({ snapshot: item, status: sessionStatus(item) }));
    expect(orderSessions(items).map((item) => item.snapshot.sessionId[4])).toEqual(['4', '3', '5', '1', '2']);
  });

  it('calls an idle session whose last run failed "failed"', () => {
    const lastRun = (outcome: 'failed' | 'succeeded' | 'interrupted') => ({
      lastRun: { runId, outcome, completedAt: '2026-12-01T10:00:00Z' },
    });
    expect(sessionStatus(snapshot('1', 'idle', 'x', lastRun('failed')))).toBe('failed');
    expect(sessionStatus(snapshot('1', 'idle', 'x', lastRun('succeeded')))).toBe('idle');
    expect(sessionStatus(snapshot('1', 'idle', 'x', lastRun('interrupted')))).toBe('idle');
    expect(sessionStatus(snapshot('1', 'waiting', 'x', lastRun('failed')))).toBe('waiting');
    expect(sessionStatus(snapshot('1', 'closed', 'x', lastRun('failed')))).toBe('closed');
  });

  it('names a session by its title, or says why it has none', () => {
    expect(sessionTitle(snapshot('1', 'idle', 'x', { title: 'Fix the build' }))).toBe('Fix the build');
    expect(sessionTitle(snapshot('1', 'idle', 'x', { title: 'Open report\u202Etxt.exe' }))).toBe(
      'Open report<U+202E>txt.exe',
    );
    expect(sessionTitle(snapshot('1', 'idle', 'x'))).toBe('No turns yet');
    expect(sessionTitle(snapshot('1', 'running', 'x', { activeRunId: runId }))).toBe('Untitled');
    expect(
      sessionTitle(snapshot('1', 'idle', 'x', { lastRun: { runId, outcome: 'succeeded', completedAt: 'x' } })),
    ).toBe('Untitled');
  });
});

describe('merging the polled pages', () => {
  it('lists an old waiting session next to the newest page, each session once', () => {
    const newest = [snapshot('1', 'idle', '2026-12-01T10:00:01Z'), snapshot('2', 'running', '2026-12-01T10:00:02Z')];
    const waiting = [snapshot('3', 'waiting', '2026-11-01T10:00:00Z')];
    const running = [snapshot('2', 'running', '2026-12-01T10:00:02Z')];
    expect(mergeSessionPages([newest, waiting, running]).map((session) => session.sessionId)).toEqual([
      newest[0]!.sessionId,
      newest[1]!.sessionId,
      waiting[0]!.sessionId,
    ]);
  });
});
