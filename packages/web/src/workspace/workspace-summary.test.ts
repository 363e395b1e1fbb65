import { describe, expect, it } from 'vitest';
import {
  afterDeleteNotice,
  changedFileName,
  changedFilesLabel,
  formatLineCounts,
  keptWork,
  summarizeWorktree,
} from './workspace-summary.js';
import { worktreeStatus } from '../conversation/conversation-test-events.js';

const ready = worktreeStatus();

describe('a worktree as the page shows it', () => {
  it('names the repository, branch and changed-file count while in use', () => {
    expect(summarizeWorktree(ready)).toEqual({
      repository: '/repo',
      branch: 'tether/0123abcd',
      path: '/data/worktrees/ses_1',
      changes: '2 changed files',
      release: null,
    });
    expect(summarizeWorktree({ ...ready, changedFiles: null })?.changes).toBeNull();
  });

  it('says where a kept worktree is and why it was kept, and that a clean one was removed', () => {
    expect(summarizeWorktree({ ...ready, state: 'kept', keptBecause: 'uncommitted_changes' })?.release).toBe(
      'Worktree kept at /data/worktrees/ses_1 on branch tether/0123abcd: it has uncommitted changes.',
    );
    expect(summarizeWorktree({ ...ready, state: 'kept', keptBecause: 'commits_beyond_base' })?.release).toBe(
      'Worktree kept at /data/worktrees/ses_1 on branch tether/0123abcd: it has commits its base does not (on its branch, its checked-out HEAD, or left behind there by a checkout: git reflog in it lists them).',
    );
    expect(summarizeWorktree({ ...ready, state: 'removed', changedFiles: 0 })?.release).toBe(
      'Worktree and branch tether/0123abcd removed: nothing in them was changed.',
    );
  });

  it('names the work deleting the session would lose: only a worktree kept for its own work', () => {
    expect(keptWork({ ...ready, state: 'kept', keptBecause: 'commits_beyond_base' })).toBe(
      'Worktree kept at /data/worktrees/ses_1 on branch tether/0123abcd: it has commits its base does not (on its branch, its checked-out HEAD, or left behind there by a checkout: git reflog in it lists them).',
    );
    expect(keptWork({ ...ready, state: 'kept', keptBecause: 'in_use' })).toBeNull();
    expect(keptWork({ ...ready, state: 'kept', keptBecause: 'checked_out_elsewhere' })).toBeNull();
    expect(keptWork(ready)).toBeNull();
    expect(keptWork({ ...ready, state: 'removed' })).toBeNull();
  });

  it('tells, once the session is deleted, whether its worktree went with it or stayed and why', () => {
    const closed = { ...ready, state: 'kept', keptBecause: 'commits_beyond_base' } as const;
    expect(afterDeleteNotice(closed, { ...ready, state: 'removed' })).toBe(
      'Session deleted with its worktree /data/worktrees/ses_1 and branch tether/0123abcd.',
    );
    expect(afterDeleteNotice(closed, { ...ready, state: 'kept', keptBecause: 'in_use' })).toBe(
      'Session deleted; its worktree /data/worktrees/ses_1 and branch tether/0123abcd stay with the session that shares them (a fork, or the session it was forked from).',
    );
    expect(afterDeleteNotice(closed, { ...ready, state: 'kept', keptBecause: 'checked_out_elsewhere' })).toBe(
      'Session deleted; its branch tether/0123abcd stays checked out in another folder (git worktree list shows where).',
    );
    expect(afterDeleteNotice(closed, { ...ready, state: 'kept', keptBecause: 'locked' })).toBe(
      'Session deleted; its worktree is kept at /data/worktrees/ses_1 on branch tether/0123abcd: it is locked (git worktree lock): unlock it to let Tether remove it.',
    );
    // Removed at the close already, a plain directory, or a daemon too old to say: nothing about a worktree.
    const removed = { ...ready, state: 'removed' } as const;
    expect(afterDeleteNotice(removed, removed)).toBe('Session deleted.');
    expect(afterDeleteNotice(null, null)).toBe('Session deleted.');
  });

  it('is nothing for a plain directory or an unknown workspace', () => {
    expect(
      summarizeWorktree({ ...ready, kind: 'directory', directory: '/repo', worktree: null, changedFiles: null }),
    ).toBeNull();
    expect(summarizeWorktree(null)).toBeNull();
  });

  it('counts files and lines in words', () => {
    expect([0, 1, 7].map(changedFilesLabel)).toEqual(['no changes', '1 changed file', '7 changed files']);
    const file = { path: 'b.txt', status: 'modified', added: 3, removed: 1, binary: false } as const;
    expect(formatLineCounts(file)).toBe('+3 −1');
    expect(formatLineCounts({ ...file, added: null, removed: null, binary: true })).toBe('binary');
    expect(changedFileName(file)).toBe('b.txt');
    expect(changedFileName({ ...file, status: 'renamed', previousPath: 'a.txt' })).toBe('a.txt → b.txt');
  });
});
