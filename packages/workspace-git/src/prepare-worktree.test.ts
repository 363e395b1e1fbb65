import { existsSync, readdirSync } from 'node:fs';
import { chmod, mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { newSessionId } from '@tether/protocol';
import { describe, expect, it, vi } from 'vitest';
import { createGitWorktreeAcquirer } from './git-worktree-acquirer.js';
import {
  agentErrorOf,
  branches,
  type GitPlayground,
  gitIn,
  gitPlayground,
  worktreeFolders,
} from './git-repository.test-helper.js';

/** Nothing a refused prepare could have made: no worktree folder, no registration, no new branch. */
async function expectNothingLeft(playground: GitPlayground, branchesBefore: string[]): Promise<void> {
  const folders = await readdir(playground.root).catch(() => []);
  expect(folders).toEqual([]);
  expect(worktreeFolders(playground)).toEqual([playground.repository]);
  expect(branches(playground)).toEqual(branchesBefore);
}

describe('prepare', () => {
  it('makes a worktree on a new tether/<short id> branch at HEAD and leaves the main checkout alone', async () => {
    const playground = await gitPlayground();
    const head = playground.git(playground.repository, 'rev-parse', 'HEAD').trim();
    const sessionId = newSessionId();

    const prepared = await playground.acquirer.prepare({
      sessionId,
      workspace: { kind: 'git_worktree', repository: playground.repository },
    });

    const worktreePath = path.join(playground.root, sessionId);
    const branch = `tether/${sessionId.slice('ses_'.length, 'ses_'.length + 8)}`;
    expect(prepared).toEqual({
      kind: 'git_worktree',
      directory: worktreePath,
      worktree: { repository: playground.repository, path: worktreePath, branch, baseCommit: head },
      state: 'ready',
      keptBecause: null,
      changedFiles: 0,
    });
    expect(playground.git(worktreePath, 'branch', '--show-current').trim()).toBe(branch);
    expect(playground.git(worktreePath, 'rev-parse', 'HEAD').trim()).toBe(head);
    expect(await readFile(path.join(worktreePath, 'src/app.txt'), 'utf8')).toBe('one\ntwo\nthree\n');
    expect(worktreeFolders(playground)).toEqual([playground.repository, worktreePath]);
    expect(playground.git(playground.repository, 'branch', '--show-current').trim()).toBe('main');
    expect(playground.git(playground.repository, 'status', '--porcelain')).toBe('');
    expect((await stat(playground.root)).mode & 0o777).toBe(0o700);
  });

  it('makes the worktree from the repository named, whose folder name ends in a space, not from the one named without it', async () => {
    const playground = await gitPlayground();
    // "repository " beside "repository": git prints the top folder on a line, its spaces part of the name.
    const spaced = `${playground.repository} `;
    await mkdir(spaced);
    playground.git(spaced, 'init', '--quiet', '--initial-branch=main');
    await playground.commitFile(spaced, 'spaced.txt', 'the repository named\n');
    const head = playground.git(spaced, 'rev-parse', 'HEAD').trim();
    const sessionId = newSessionId();

    const prepared = await playground.acquirer.prepare({
      sessionId,
      workspace: { kind: 'git_worktree', repository: spaced },
    });

    expect(prepared.worktree).toMatchObject({ repository: spaced, baseCommit: head });
    expect(await readFile(path.join(prepared.directory, 'spaced.txt'), 'utf8')).toBe('the repository named\n');
    expect(playground.git(spaced, 'branch', '--list', 'tether/*').trim()).not.toBe('');
    expect(branches(playground)).toEqual(['main']);
  });

  it('under a permissive umask, leaves nothing it made in the repository writable by others', async () => {
    const playground = await gitPlayground();
    const sessionId = newSessionId();
    const previous = process.umask(0);
    let prepared: Awaited<ReturnType<typeof playground.acquirer.prepare>>;
    try {
      prepared = await playground.acquirer.prepare({
        sessionId,
        workspace: { kind: 'git_worktree', repository: playground.repository },
      });
    } finally {
      process.umask(previous);
    }
    const gitDirectory = path.join(playground.repository, '.git');
    const administration = path.join(gitDirectory, 'worktrees', sessionId);
    const made = [
      administration,
      ...(await readdir(administration)).map((name) => path.join(administration, name)),
      path.join(gitDirectory, 'refs', 'heads', 'tether'),
      path.join(gitDirectory, 'refs', 'heads', prepared.worktree!.branch),
    ];
    const writableByOthers = [];
    for (const file of made) if (((await stat(file)).mode & 0o022) !== 0) writableByOthers.push(file);
    expect(writableByOthers).toEqual([]);
  });

  it('starts from baseRef and names the branch as asked, from any folder inside the repository', async () => {
    const playground = await gitPlayground();
    const first = playground.git(playground.repository, 'rev-parse', 'HEAD').trim();
    playground.git(playground.repository, 'tag', 'v1');
    await playground.commitFile(playground.repository, 'README.md', 'hello again\n');

    const prepared = await playground.prepare({
      repository: path.join(playground.repository, 'src'),
      baseRef: 'v1',
      branch: 'feature/from-v1',
    });

    expect(prepared.worktree).toMatchObject({
      repository: playground.repository,
      branch: 'feature/from-v1',
      baseCommit: first,
    });
    expect(playground.git(prepared.directory, 'branch', '--show-current').trim()).toBe('feature/from-v1');
    expect(await readFile(path.join(prepared.directory, 'README.md'), 'utf8')).toBe('hello\n');
  });

  it('ignores GIT_DIR, GIT_WORK_TREE and GIT_INDEX_FILE inherited from its own environment', async () => {
    const playground = await gitPlayground();
    const elsewhere = await gitPlayground();
    const acquirer = createGitWorktreeAcquirer({
      root: playground.root,
      environment: {
        ...playground.environment,
        GIT_DIR: path.join(elsewhere.repository, '.git'),
        GIT_WORK_TREE: elsewhere.repository,
        GIT_INDEX_FILE: path.join(elsewhere.repository, '.git', 'index'),
      },
    });

    const prepared = await acquirer.prepare({
      sessionId: newSessionId(),
      workspace: { kind: 'git_worktree', repository: playground.repository },
    });

    expect(prepared.worktree?.repository).toBe(playground.repository);
    expect(worktreeFolders(playground)).toEqual([playground.repository, prepared.directory]);
    expect(worktreeFolders(elsewhere)).toEqual([elsewhere.repository]);
  });

  describe('refuses, saying what to do, and leaves nothing behind', () => {
    it('a folder that is not a git repository', async () => {
      const playground = await gitPlayground();
      const plain = path.join(playground.folder, 'plain');
      await mkdir(plain);
      const error = await agentErrorOf(playground.prepare({ repository: plain }));
      expect(error.code).toBe('invalid_workspace');
      expect(error.details?.reason).toBe('not_a_git_repository');
      expect(error.message).toContain(plain);
      expect(error.message).toContain('git init');
      await expectNothingLeft(playground, ['main']);
    });

    it("a repository another user owns (git's safe.directory check): says so and how to trust it, not to run git init", async () => {
      const playground = await gitPlayground();
      // git's own switch for its tests: the ownership check fails as for a repository another user owns.
      const wrapper = path.join(playground.folder, 'git-as-another-owner');
      await writeFile(wrapper, '#!/bin/sh\nGIT_TEST_ASSUME_DIFFERENT_OWNER=1 exec git "$@"\n', { mode: 0o755 });
      const acquirer = createGitWorktreeAcquirer({
        root: playground.root,
        environment: playground.environment,
        gitPath: wrapper,
      });
      const error = await agentErrorOf(
        acquirer.prepare({
          sessionId: newSessionId(),
          workspace: { kind: 'git_worktree', repository: playground.repository },
        }),
      );
      expect(error.details?.reason).toBe('repository_not_trusted');
      expect(error.message).toContain(`git config --global --add safe.directory ${playground.repository}`);
      expect(error.message).not.toContain('git init');
      await expectNothingLeft(playground, ['main']);
    });

    it('a bare repository', async () => {
      const playground = await gitPlayground();
      const bare = path.join(playground.folder, 'bare.git');
      playground.git(playground.folder, 'clone', '--quiet', '--bare', playground.repository, bare);
      const error = await agentErrorOf(playground.prepare({ repository: bare }));
      expect(error.details?.reason).toBe('bare_repository');
      expect(error.message).toContain('git clone');
      expect(await readdir(playground.root).catch(() => [])).toEqual([]);
      expect(playground.git(bare, 'worktree', 'list', '--porcelain')).not.toContain(playground.root);
    });

    it('an unknown base ref', async () => {
      const playground = await gitPlayground();
      const error = await agentErrorOf(playground.prepare({ baseRef: 'no-such-branch' }));
      expect(error.details?.reason).toBe('unknown_ref');
      expect(error.message).toContain('no-such-branch');
      await expectNothingLeft(playground, ['main']);
    });

    it('a repository with no commits yet', async () => {
      const playground = await gitPlayground();
      const empty = path.join(playground.folder, 'empty');
      await mkdir(empty);
      gitIn(playground.environment, empty, ['init', '--quiet']);
      const error = await agentErrorOf(playground.prepare({ repository: empty }));
      expect(error.details?.reason).toBe('unknown_ref');
      expect(error.message).toContain('no commits yet');
      expect(await readdir(playground.root).catch(() => [])).toEqual([]);
    });

    it('a checkout on a branch with no commits yet, in a repository that has some: names the branch, not an empty repository', async () => {
      const playground = await gitPlayground();
      playground.git(playground.repository, 'switch', '--quiet', '--orphan', 'fresh');
      const error = await agentErrorOf(playground.prepare());
      expect(error.details?.reason).toBe('unknown_ref');
      expect(error.message).toContain('on fresh, a branch with no commits yet');
      expect(error.message).not.toContain('has no commits yet');
      // An explicit base that does not exist is named as such, whatever the checkout is on.
      const unknown = await agentErrorOf(playground.prepare({ baseRef: 'no-such-branch' }));
      expect(unknown.message).toContain('no branch, tag or commit named no-such-branch');
      // A base that exists is taken: the checkout's own branch does not matter.
      const prepared = await playground.prepare({ baseRef: 'main' });
      expect(prepared.worktree?.baseCommit).toBe(playground.git(playground.repository, 'rev-parse', 'main').trim());
    });

    it('a branch that exists already', async () => {
      const playground = await gitPlayground();
      playground.git(playground.repository, 'branch', 'taken');
      const error = await agentErrorOf(playground.prepare({ branch: 'taken' }));
      expect(error.details?.reason).toBe('branch_exists');
      // The safe delete, which refuses while the branch holds unmerged commits: never -D, which would lose them.
      expect(error.message).toContain('git branch -d taken');
      expect(error.message).not.toContain('git branch -D');
      await expectNothingLeft(playground, ['main', 'taken']);
    });

    it('a branch whose name clashes with an existing one (a/b next to a)', async () => {
      const playground = await gitPlayground();
      playground.git(playground.repository, 'branch', 'work/one');
      const error = await agentErrorOf(playground.prepare({ branch: 'work' }));
      expect(error.details?.reason).toBe('branch_exists');
      expect(error.message).toContain('has a branch work/one, so git cannot make the branch work next to it');
      expect(error.message).toContain('git branch -m work/one NEW-NAME');
      await expectNothingLeft(playground, ['main', 'work/one']);
    });

    it('a branch named tether, which every default tether/… branch clashes with: names it, not the branch never made', async () => {
      const playground = await gitPlayground();
      playground.git(playground.repository, 'branch', 'tether');
      const error = await agentErrorOf(playground.prepare());
      expect(error.details?.reason).toBe('branch_exists');
      expect(error.message).toMatch(
        /has a branch tether, so git cannot make the branch tether\/[0-9a-f]{8} next to it/,
      );
      expect(error.message).toContain('git branch -m tether NEW-NAME');
      expect(error.message).not.toContain('git branch -D');
      await expectNothingLeft(playground, ['main', 'tether']);
    });

    it.each(['bad..name', 'ends.lock', 'with space', '@{-1}'])('an invalid branch name: %s', async (branch) => {
      const playground = await gitPlayground();
      const error = await agentErrorOf(playground.prepare({ branch }));
      expect(error.details?.reason).toBe('invalid_branch');
      expect(error.message).toContain('Pick another name');
      await expectNothingLeft(playground, ['main']);
    });

    it('a worktree git could only half make (a failing post-checkout hook): folder, registration and branch go', async () => {
      const playground = await gitPlayground();
      const hook = path.join(playground.repository, '.git', 'hooks', 'post-checkout');
      await writeFile(hook, '#!/bin/sh\necho "checkout refused by hook" >&2\nexit 1\n');
      await chmod(hook, 0o755);
      const error = await agentErrorOf(playground.prepare({ branch: 'half-made' }));
      expect(error.details?.reason).toBe('git_failed');
      expect(error.message).toContain('worktree');
      // The hook's own words, not git's progress line before them.
      expect(error.message).toContain('checkout refused by hook');
      expect(error.message).not.toContain('Preparing worktree');
      await expectNothingLeft(playground, ['main']);
    });

    it('a worktree add stopped by the host while git still holds it locked (a checkout filter that waits): registration, folder and branch go', async () => {
      const playground = await gitPlayground();
      const started = path.join(playground.folder, 'filter-started');
      await writeFile(path.join(playground.repository, '.gitattributes'), 'slow.txt filter=slow\n');
      await writeFile(path.join(playground.repository, 'slow.txt'), 'data\n');
      playground.git(playground.repository, 'config', 'filter.slow.clean', 'cat');
      playground.git(playground.repository, 'add', '--all');
      playground.git(playground.repository, 'commit', '--quiet', '-m', 'a filtered file');
      playground.git(playground.repository, 'config', 'filter.slow.smudge', `touch '${started}'; sleep 60; cat`);
      const preparing = agentErrorOf(playground.prepare({ branch: 'stopped' })).catch((error: unknown) => error);
      await vi.waitFor(() => expect(existsSync(started)).toBe(true), { timeout: 20_000, interval: 20 });
      // git has not finished: its "initializing" lock is still on the registration.
      expect(readdirSync(path.join(playground.repository, '.git', 'worktrees'))).toHaveLength(1);
      playground.acquirer.stop!();
      await preparing;
      await expectNothingLeft(playground, ['main']);
    });
  });
});
