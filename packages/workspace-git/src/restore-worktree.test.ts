import { existsSync } from 'node:fs';
import { chmod, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import type { PreparedWorkspace } from '@tether/runtime';
import {
  type GitPlayground,
  agentErrorOf,
  branchBorrowedByTheMainCheckout,
  branches,
  gitPlayground,
  worktreeFolders,
} from './git-repository.test-helper.js';

describe('restore', () => {
  it('answers a worktree that is there as it is, ready again', async () => {
    const playground = await gitPlayground();
    const prepared = await playground.prepare();
    await writeFile(path.join(prepared.directory, 'work.txt'), 'in progress\n');
    const kept = await playground.acquirer.release(prepared, { discardChanges: false, inUse: false });

    const restored = await playground.acquirer.restore(kept, { sessionId: 'ses_restored' });

    expect(restored).toEqual({ ...kept, state: 'ready', keptBecause: null });
    expect(await readFile(path.join(prepared.directory, 'work.txt'), 'utf8')).toBe('in progress\n');
  });

  it('refuses worktree_root_unsafe, changing nothing, when other users can now write in the worktree root', async () => {
    const playground = await gitPlayground();
    const present = await playground.prepare({ branch: 'present' });
    const deleted = await playground.prepare({ branch: 'deleted' });
    await rm(deleted.directory, { recursive: true, force: true });
    await chmod(playground.root, 0o777);

    for (const prepared of [present, deleted]) {
      const refusal = await agentErrorOf(playground.acquirer.restore(prepared, { sessionId: 'ses_restored' }));
      expect(refusal.code).toBe('invalid_workspace');
      expect(refusal.details).toMatchObject({ reason: 'worktree_root_unsafe' });
      expect(refusal.message).toContain('chmod 700');
    }
    // Nothing re-added, nothing pruned: the deleted one is still registered, not back on disk.
    expect(worktreeFolders(playground).sort()).toEqual(
      [playground.repository, present.directory, deleted.directory].sort(),
    );
    expect(existsSync(deleted.directory)).toBe(false);
  });

  it('re-adds a worktree whose folder was deleted by hand, on its branch with its commits', async () => {
    const playground = await gitPlayground();
    const prepared = await playground.prepare({ branch: 'kept-work' });
    await playground.commitFile(prepared.directory, 'feature.txt', 'done\n');
    const tip = playground.git(prepared.directory, 'rev-parse', 'HEAD').trim();
    await rm(prepared.directory, { recursive: true, force: true });

    const restored = await playground.acquirer.restore(prepared, { sessionId: 'ses_restored' });

    expect(restored).toEqual({ ...prepared, state: 'ready', keptBecause: null, changedFiles: 1 });
    expect(playground.git(prepared.directory, 'branch', '--show-current').trim()).toBe('kept-work');
    expect(playground.git(prepared.directory, 'rev-parse', 'HEAD').trim()).toBe(tip);
    expect(await readFile(path.join(prepared.directory, 'feature.txt'), 'utf8')).toBe('done\n');
    expect(worktreeFolders(playground)).toEqual([playground.repository, prepared.directory]);
  });

  it("stopped by the host's shutdown while git adds it back, leaves nothing the session does not name: a branch it made goes, a kept one stays", async () => {
    // A clean release removed worktree and branch: adding it back makes the branch again.
    const first = await gitPlayground();
    const clean = await first.prepare({ branch: 'made-again' });
    const removed = await first.acquirer.release(clean, { discardChanges: false, inUse: false });
    await stoppedWhileAddingBack(first, removed);
    expect(existsSync(clean.directory)).toBe(false);
    expect(worktreeFolders(first)).toEqual([first.repository]);
    expect(branches(first)).toEqual(['main']);

    // A folder deleted by hand whose branch was kept with its commits: the branch stays as it was.
    const second = await gitPlayground();
    const kept = await second.prepare({ branch: 'kept-work' });
    await second.commitFile(kept.directory, 'feature.txt', 'done\n');
    const tip = second.git(kept.directory, 'rev-parse', 'HEAD').trim();
    await rm(kept.directory, { recursive: true, force: true });
    await stoppedWhileAddingBack(second, kept);
    expect(existsSync(kept.directory)).toBe(false);
    expect(worktreeFolders(second)).toEqual([second.repository]);
    expect(branches(second)).toEqual(['kept-work', 'main']);
    expect(second.git(second.repository, 'rev-parse', 'kept-work').trim()).toBe(tip);
  });

  it('re-creates the branch at the base commit after a clean release removed both', async () => {
    const playground = await gitPlayground();
    const prepared = await playground.prepare({ branch: 'reopened' });
    const removed = await playground.acquirer.release(prepared, { discardChanges: false, inUse: false });
    expect(branches(playground)).toEqual(['main']);
    // The repository moved on meanwhile; the session's worktree still starts where it started.
    await playground.commitFile(playground.repository, 'README.md', 'later\n');

    const restored = await playground.acquirer.restore(removed, { sessionId: 'ses_restored' });

    expect(restored).toEqual({ ...prepared, state: 'ready', keptBecause: null, changedFiles: 0 });
    expect(branches(playground)).toEqual(['main', 'reopened']);
    expect(playground.git(prepared.directory, 'rev-parse', 'HEAD').trim()).toBe(prepared.worktree?.baseCommit);
    expect(await readFile(path.join(prepared.directory, 'README.md'), 'utf8')).toBe('hello\n');
  });

  it("after a clean release, refuses a branch of the same name made since (someone else's), leaving it as it is", async () => {
    const playground = await gitPlayground();
    const prepared = await playground.prepare({ branch: 'feature/x' });
    const removed = await playground.acquirer.release(prepared, { discardChanges: false, inUse: false });
    playground.git(playground.repository, 'branch', 'feature/x');
    await playground.commitFile(playground.repository, 'mine.txt', 'user work\n');
    playground.git(playground.repository, 'branch', '-f', 'feature/x', 'HEAD');
    const users = playground.git(playground.repository, 'rev-parse', 'feature/x').trim();

    const refusal = await agentErrorOf(playground.acquirer.restore(removed, { sessionId: 'ses_restored' }));

    expect(refusal.code).toBe('invalid_workspace');
    expect(refusal.details).toMatchObject({ reason: 'branch_exists' });
    expect(refusal.message).toContain('git branch -m feature/x NEW');
    expect(playground.git(playground.repository, 'rev-parse', 'feature/x').trim()).toBe(users);
    expect(existsSync(prepared.directory)).toBe(false);
  });

  it('after a clean release, refuses a branch made since whose name clashes with the removed one, naming it', async () => {
    const playground = await gitPlayground();
    const prepared = await playground.prepare({ branch: 'tether/reopened' });
    const removed = await playground.acquirer.release(prepared, { discardChanges: false, inUse: false });
    playground.git(playground.repository, 'branch', 'tether');

    const refusal = await agentErrorOf(playground.acquirer.restore(removed, { sessionId: 'ses_restored' }));

    expect(refusal).toMatchObject({ code: 'invalid_workspace', details: { reason: 'branch_exists' } });
    expect(refusal.message).toContain('has a branch tether, so git cannot make the session');
    expect(refusal.message).toContain('git branch -m tether NEW-NAME');
    expect(branches(playground)).toEqual(['main', 'tether']);
    expect(existsSync(prepared.directory)).toBe(false);
  });

  it('refuses, saying why, when the branch is checked out elsewhere or the repository is gone', async () => {
    const playground = await gitPlayground();
    const prepared = await branchBorrowedByTheMainCheckout(playground);

    const checkedOut = await agentErrorOf(playground.acquirer.restore(prepared, { sessionId: 'ses_restored' }));
    expect(checkedOut.details?.reason).toBe('branch_checked_out');
    expect(checkedOut.message).toContain('switch that checkout to another branch');

    await rm(playground.repository, { recursive: true, force: true });
    const gone = await agentErrorOf(playground.acquirer.restore(prepared, { sessionId: 'ses_restored' }));
    expect(gone.details?.reason).toBe('not_a_git_repository');
    expect(gone.message).toContain(playground.repository);
  });
});

/** A restore whose `git worktree add` a post-checkout hook holds, stopped by the acquirer's shutdown: refused runtime_stopped. */
async function stoppedWhileAddingBack(playground: GitPlayground, prepared: PreparedWorkspace): Promise<void> {
  const marker = path.join(playground.folder, 'adding-back');
  const hook = path.join(playground.repository, '.git', 'hooks', 'post-checkout');
  await writeFile(hook, `#!/bin/sh\ntouch '${marker}'\nexec sleep 60\n`);
  await chmod(hook, 0o755);
  const restoring = agentErrorOf(playground.acquirer.restore(prepared, { sessionId: 'ses_restored' }));
  await vi.waitFor(() => expect(existsSync(marker)).toBe(true), { timeout: 15_000, interval: 20 });
  playground.acquirer.stop?.();
  expect((await restoring).code).toBe('runtime_stopped');
}
