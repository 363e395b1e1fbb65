import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { AgentError, newSessionId } from '@tether/protocol';
import type { PreparedWorkspace, WorkspaceAcquirer } from '@tether/runtime';
import { afterEach } from 'vitest';
import { createGitWorktreeAcquirer } from './git-worktree-acquirer.js';

/**
 * A private playground per test: a temp HOME (so the machine's ~/.gitconfig never applies, neither to the
 * test's git nor to the acquirer's), a repository with a first commit, and a worktree root.
 */
export interface GitPlayground {
  readonly folder: string;
  readonly repository: string;
  readonly root: string;
  readonly environment: Record<string, string>;
  readonly acquirer: WorkspaceAcquirer;
  /** git in `cwd` with the test's identity and environment; its stdout. */
  git(cwd: string, ...args: string[]): string;
  prepare(options?: { repository?: string; baseRef?: string; branch?: string }): Promise<PreparedWorkspace>;
  /** Writes `name` in `folder` and commits it there (as the agent would on its branch). */
  commitFile(folder: string, name: string, content: string): Promise<void>;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

export function gitIn(environment: Record<string, string>, cwd: string, args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=Tether Test', '-c', 'user.email=test@tether.invalid', ...args], {
    cwd,
    env: environment,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

export async function writeFiles(folder: string, files: Record<string, string | Buffer>): Promise<void> {
  for (const [name, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(folder, name)), { recursive: true });
    await writeFile(path.join(folder, name), content);
  }
}

export const firstCommitFiles = {
  'README.md': 'hello\n',
  'src/app.txt': 'one\ntwo\nthree\n',
  'notes/old.txt': 'to be deleted\n',
  '.gitignore': 'build/\n',
};

export async function gitPlayground(options: { files?: Record<string, string> } = {}): Promise<GitPlayground> {
  const folder = await realpath(await mkdtemp(path.join(tmpdir(), 'tether-workspace-git-')));
  cleanups.push(() => rm(folder, { recursive: true, force: true }));
  const home = path.join(folder, 'home');
  await mkdir(home);
  const environment = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, GIT_CONFIG_NOSYSTEM: '1', LC_ALL: 'C' };
  const git = (cwd: string, ...args: string[]) => gitIn(environment, cwd, args);
  const repository = path.join(folder, 'repository');
  await mkdir(repository);
  git(repository, 'init', '--quiet', '--initial-branch=main');
  await writeFiles(repository, options.files ?? firstCommitFiles);
  git(repository, 'add', '--all');
  git(repository, 'commit', '--quiet', '-m', 'first');
  const root = path.join(folder, 'worktrees');
  const acquirer = createGitWorktreeAcquirer({ root, environment });
  return {
    folder,
    repository,
    root,
    environment,
    acquirer,
    git,
    prepare: (prepareOptions = {}) =>
      acquirer.prepare({
        sessionId: newSessionId(),
        workspace: { kind: 'git_worktree', repository, ...prepareOptions },
      }),
    commitFile: async (cwd, name, content) => {
      await writeFiles(cwd, { [name]: content });
      git(cwd, 'add', name);
      git(cwd, 'commit', '--quiet', '-m', `add ${name}`);
    },
  };
}

/** The folders `git worktree list` knows, main checkout first. */
export function worktreeFolders(playground: GitPlayground): string[] {
  return playground
    .git(playground.repository, 'worktree', 'list', '--porcelain')
    .split('\n')
    .filter((line) => line.startsWith('worktree '))
    .map((line) => line.slice('worktree '.length));
}

export function branches(playground: GitPlayground): string[] {
  return playground
    .git(playground.repository, 'for-each-ref', '--format=%(refname:short)', 'refs/heads/')
    .split('\n')
    .filter((line) => line.length > 0);
}

/** The AgentError a promise is rejected with (a test failure if it resolves, or rejects with anything else). */
export async function agentErrorOf(promise: Promise<unknown>): Promise<AgentError> {
  const error = await promise.then(
    () => new Error('expected an AgentError, but it succeeded'),
    (reason: unknown) => reason,
  );
  if (!AgentError.isInstance(error)) throw error;
  return error;
}

/** A session's worktree whose folder the user deleted, its branch since checked out in the main checkout. */
export async function branchBorrowedByTheMainCheckout(playground: GitPlayground): Promise<PreparedWorkspace> {
  const prepared = await playground.prepare({ branch: 'borrowed' });
  await rm(prepared.directory, { recursive: true, force: true });
  playground.git(playground.repository, 'worktree', 'prune');
  playground.git(playground.repository, 'switch', '--quiet', 'borrowed');
  return prepared;
}
