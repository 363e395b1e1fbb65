import { access } from 'node:fs/promises';
import { newSessionId } from '@tether/protocol';
import { describe, expect, it } from 'vitest';
import { createGitWorktreeAcquirer } from './git-worktree-acquirer.js';
import { branches, gitPlayground, worktreeFolders } from './git-repository.test-helper.js';

describe('ten sessions on one repository at once', () => {
  it('each get their own worktree and branch, and all release cleanly at once', async () => {
    const playground = await gitPlayground();

    const prepared = await Promise.all(Array.from({ length: 10 }, () => playground.prepare()));

    const folders = prepared.map((workspace) => workspace.directory);
    const branchNames = prepared.map((workspace) => workspace.worktree?.branch ?? '');
    expect(new Set(folders).size).toBe(10);
    expect(new Set(branchNames).size).toBe(10);
    expect(worktreeFolders(playground).sort()).toEqual([playground.repository, ...folders].sort());
    expect(branches(playground).sort()).toEqual(['main', ...branchNames].sort());
    for (const workspace of prepared) {
      expect(playground.git(workspace.directory, 'branch', '--show-current').trim()).toBe(workspace.worktree?.branch);
    }

    const released = await Promise.all(
      prepared.map((workspace) => playground.acquirer.release(workspace, { discardChanges: false, inUse: false })),
    );

    expect(released.map((workspace) => workspace.state)).toEqual(Array(10).fill('removed'));
    expect(worktreeFolders(playground)).toEqual([playground.repository]);
    expect(branches(playground)).toEqual(['main']);
    for (const folder of folders) await expect(access(folder)).rejects.toThrow();
  });

  it('each get their own worktree when ten separate acquirers (as ten Tether processes would) race on git alone', async () => {
    const playground = await gitPlayground();
    const acquirers = Array.from({ length: 10 }, () =>
      createGitWorktreeAcquirer({ root: playground.root, environment: playground.environment }),
    );

    const prepared = await Promise.all(
      acquirers.map((acquirer) =>
        acquirer.prepare({
          sessionId: newSessionId(),
          workspace: { kind: 'git_worktree', repository: playground.repository },
        }),
      ),
    );
    expect(worktreeFolders(playground).sort()).toEqual(
      [playground.repository, ...prepared.map((workspace) => workspace.directory)].sort(),
    );

    const released = await Promise.all(
      prepared.map((workspace, index) => acquirers[index]?.release(workspace, { discardChanges: false, inUse: false })),
    );
    expect(released.map((workspace) => workspace?.state)).toEqual(Array(10).fill('removed'));
    expect(worktreeFolders(playground)).toEqual([playground.repository]);
    expect(branches(playground)).toEqual(['main']);
  });
});
