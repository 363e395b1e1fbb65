import type { EventBody, ProtocolEvent, WorkspaceStatus } from '@tether/protocol';
import { type ConversationState, applyEvent, emptyConversation } from './conversation-state.js';

/** For the fold's unit tests: the session their events belong to. */
export const testSessionId = `ses_${'a'.repeat(32)}`;

/** Folds event bodies in order from an empty conversation, numbering them from seq 1. */
export function fold(bodies: readonly EventBody[]): ConversationState {
  let seq = 0;
  return bodies.reduce(
    (state, body) =>
      applyEvent(state, {
        ...body,
        sessionId: testSessionId,
        seq: ++seq,
        at: '2026-12-01T10:00:00.000Z',
      } as ProtocolEvent),
    emptyConversation,
  );
}

/** session.opened in /repo with Claude; `extra` adds or replaces fields (forkedFrom, …). */
export function openedBody(extra: Partial<Extract<EventBody, { type: 'session.opened' }>> = {}): EventBody {
  return {
    type: 'session.opened',
    provider: 'claude',
    workspace: { kind: 'directory', path: '/repo' },
    configuration: {},
    ephemeral: false,
    reopened: false,
    ...extra,
  };
}

/** A worktree in use, as session.workspace_ready and the snapshot carry it; `extra` changes what a test looks at. */
export function worktreeStatus(extra: Partial<WorkspaceStatus> = {}): WorkspaceStatus {
  const path = '/data/worktrees/ses_1';
  return {
    kind: 'git_worktree',
    directory: path,
    worktree: { repository: '/repo', path, branch: 'tether/0123abcd', baseCommit: 'c'.repeat(40) },
    state: 'ready',
    keptBecause: null,
    changedFiles: 2,
    ...extra,
  };
}
