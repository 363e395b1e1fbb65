import { describe, expect, it } from 'vitest';
import { applyEvent } from './conversation-state.js';
import { fold, openedBody, testSessionId as sessionId, worktreeStatus } from './conversation-test-events.js';

const runId = `run_${'b'.repeat(32)}`;
const ready = worktreeStatus({ changedFiles: 0 });
const written = { path: 'notes.txt', status: 'added', added: 2, removed: 0, binary: false } as const;
const picture = { path: 'logo.png', status: 'modified', added: null, removed: null, binary: true } as const;

describe('the conversation state: the workspace and what runs changed', () => {
  it('takes the workspace from session.workspace_ready and its release from session.workspace_released', () => {
    const opened = fold([
      openedBody({ workspace: { kind: 'git_worktree', repository: '/repo' } }),
      { type: 'session.workspace_ready', workspace: ready },
    ]);
    expect(opened.workspacePath).toBe('/repo');
    expect(opened.workspace).toEqual(ready);
    expect(opened.workspaceSeq).toBe(2);
    const kept = { ...ready, state: 'kept', keptBecause: 'uncommitted_changes', changedFiles: 1 } as const;
    const released = applyEvent(opened, {
      type: 'session.workspace_released',
      workspace: kept,
      sessionId,
      seq: 3,
      at: 'x',
    });
    expect(released.workspace).toEqual(kept);
    expect(released.workspaceSeq).toBe(3);
  });

  it("puts a run's changed files on that run, and moves workspaceSeq", () => {
    const state = fold([
      openedBody(),
      { type: 'session.workspace_ready', workspace: ready },
      { type: 'run.started', runId, input: [{ type: 'text', text: 'Write it' }], inputRedacted: false },
      { type: 'run.completed', runId, outcome: 'succeeded' },
      { type: 'run.files_changed', runId, files: [written, picture], truncated: true },
    ]);
    expect(state.runs[0]!.changedFiles).toEqual({ files: [written, picture], truncated: true });
    expect(state.workspaceSeq).toBe(5);
    // Folding the same event again (a resumed stream) changes nothing.
    const again = applyEvent(state, {
      type: 'run.files_changed',
      runId,
      files: [],
      truncated: false,
      sessionId,
      seq: 5,
      at: 'x',
    });
    expect(again).toBe(state);
  });

  it('knows no workspace and no changed files before it is told', () => {
    const state = fold([
      openedBody(),
      { type: 'run.started', runId, input: [{ type: 'text', text: 'Hi' }], inputRedacted: false },
      { type: 'diagnostic', level: 'debug', code: 'x' },
    ]);
    expect(state.workspace).toBeNull();
    expect(state.workspaceSeq).toBe(0);
    expect(state.runs[0]!.changedFiles).toBeNull();
  });
});
