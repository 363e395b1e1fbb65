import { mkdir, readdir } from 'node:fs/promises';
import path from 'node:path';
import { newSessionId } from '@tether/protocol';
import { describe, expect, it } from 'vitest';
import { createGitWorktreeAcquirer } from './git-worktree-acquirer.js';
import { type GitPlayground, branches, gitPlayground, worktreeFolders } from './git-repository.test-helper.js';
import { recordIntent } from './worktree-intents.js';

/** What a host of `owner` killed outright after git made the branch and the worktree leaves: all of it, and its intent. */
async function leftHalfMade(playground: GitPlayground, owner: string) {
  const sessionId = newSessionId();
  const branch = `tether/${sessionId.slice(4, 12)}`;
  const worktreePath = path.join(playground.root, sessionId);
  const baseCommit = playground.git(playground.repository, 'rev-parse', 'HEAD').trim();
  await mkdir(playground.root, { recursive: true, mode: 0o700 });
  await recordIntent(playground.root, sessionId, {
    owner,
    repository: playground.repository,
    worktreePath,
    branch,
    baseCommit,
  });
  playground.git(playground.repository, 'branch', '--no-track', branch, baseCommit);
  playground.git(playground.repository, 'worktree', 'add', '--quiet', worktreePath, branch);
  return { sessionId, branch, worktreePath };
}

function acquirerOf(playground: GitPlayground, owner: string) {
  return createGitWorktreeAcquirer({ root: playground.root, environment: playground.environment, owner });
}

describe('the sweep of what a host ended outright left half-made', () => {
  it("takes back its own owner's worktree, registration, branch and record, and leaves another owner's alone", async () => {
    const playground = await gitPlayground();
    await leftHalfMade(playground, '/data/this');
    // Another host sharing the root (a data dir of its own): it may be making this one right now.
    const others = await leftHalfMade(playground, '/data/other');

    await acquirerOf(playground, '/data/this').sweep!();

    expect(branches(playground)).toEqual(['main', others.branch]);
    expect(worktreeFolders(playground)).toEqual([playground.repository, others.worktreePath]);
    expect(await readdir(playground.root)).toEqual([`.${others.sessionId}.being-made.json`, others.sessionId].sort());
  });

  it('keeps a branch that moved on since (work, or a branch of that name made since), taking the rest back', async () => {
    const playground = await gitPlayground();
    const left = await leftHalfMade(playground, '/data/this');
    await playground.commitFile(left.worktreePath, 'work.txt', 'work\n');

    await acquirerOf(playground, '/data/this').sweep!();

    expect(branches(playground)).toEqual(['main', left.branch]);
    expect(worktreeFolders(playground)).toEqual([playground.repository]);
    expect(await readdir(playground.root)).toEqual([]);
  });

  it('finds nothing to do after prepares that finished, or failed, and none in a root never made', async () => {
    const playground = await gitPlayground();
    const acquirer = acquirerOf(playground, '/data/this');
    await acquirer.sweep!();
    await expect(readdir(playground.root)).rejects.toMatchObject({ code: 'ENOENT' });
    const sessionId = newSessionId();
    await acquirer.prepare({ sessionId, workspace: { kind: 'git_worktree', repository: playground.repository } });
    await expect(
      acquirer.prepare({
        sessionId: newSessionId(),
        workspace: { kind: 'git_worktree', repository: playground.repository, baseRef: 'no-such-ref' },
      }),
    ).rejects.toThrow();
    // The finished prepare forgot its record: only its worktree is in the root.
    expect(await readdir(playground.root)).toEqual([sessionId]);
    await acquirerOf(playground, '/data/this').sweep!();
    expect(await readdir(playground.root)).toEqual([sessionId]);
    expect(branches(playground)).toHaveLength(2);
  });
});
