import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runGitRetryingLocks } from './git-lock-retry.js';
import { agentErrorOf } from './git-repository.test-helper.js';
import { type GitContext, gitEnvironment, runGit } from './run-git.js';

let folder = '';
afterEach(async () => {
  if (folder) await rm(folder, { recursive: true, force: true });
});

/** A stand-in for git: a shell script, for what real git will not do on demand (hang, flood, hold a lock). */
async function fakeGit(script: string, timeoutMs = 10_000): Promise<GitContext> {
  folder = await mkdtemp(path.join(tmpdir(), 'tether-fake-git-'));
  const gitPath = path.join(folder, 'git');
  await writeFile(gitPath, `#!/bin/sh\n${script}\n`);
  await chmod(gitPath, 0o755);
  return { gitPath, environment: { PATH: '/usr/bin:/bin', COUNTER: path.join(folder, 'calls') }, timeoutMs };
}

describe('gitEnvironment', () => {
  it('drops every GIT_* that would point git elsewhere, keeps where its configuration lives, and fixes prompt and language', () => {
    expect(
      gitEnvironment({
        PATH: '/usr/bin',
        HOME: '/home/someone',
        LANG: 'de_DE.UTF-8',
        GIT_DIR: '/elsewhere/.git',
        GIT_WORK_TREE: '/elsewhere',
        GIT_INDEX_FILE: '/elsewhere/.git/index',
        GIT_OBJECT_DIRECTORY: '/elsewhere/objects',
        GIT_CONFIG_PARAMETERS: "'core.bare'='true'",
        GIT_CONFIG_GLOBAL: '/home/someone/.config/git/tether',
        GIT_CONFIG_NOSYSTEM: '1',
        UNSET: undefined,
      }),
    ).toEqual({
      PATH: '/usr/bin',
      HOME: '/home/someone',
      LANG: 'de_DE.UTF-8',
      GIT_CONFIG_GLOBAL: '/home/someone/.config/git/tether',
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_TERMINAL_PROMPT: '0',
      LC_ALL: 'C',
    });
  });
});

describe('runGit', () => {
  it('stops a git that runs past the timeout', async () => {
    const git = await fakeGit('exec sleep 30', 200);
    const error = await agentErrorOf(runGit(git, { cwd: folder, args: ['status'] }));
    expect(error.details?.reason).toBe('git_timeout');
    expect(error.message).toContain('git status');
  });

  it('says when git cannot be started', async () => {
    const git = { ...(await fakeGit('exit 0')), gitPath: path.join(tmpdir(), 'no-such-folder', 'git') };
    const error = await agentErrorOf(runGit(git, { cwd: folder, args: ['status'] }));
    expect(error.details).toMatchObject({ reason: 'git_unavailable', systemErrorCode: 'ENOENT' });
    expect(error.message).toContain('gitPath');
  });

  it('says when the folder it would work in is gone (not that git is missing)', async () => {
    const git = await fakeGit('exit 0');
    const gone = path.join(folder, 'moved-away');
    const error = await agentErrorOf(runGit(git, { cwd: gone, args: ['status'] }));
    expect(error.details).toMatchObject({ reason: 'missing' });
    expect(error.message).toContain(`The folder ${gone} no longer exists`);
    expect(error.message).not.toContain('installed');
  });

  it('refuses more output than the call allows, or cuts it there when asked', async () => {
    const git = await fakeGit('head -c 200000 /dev/zero');
    const error = await agentErrorOf(runGit(git, { cwd: folder, args: ['diff-tree'], maxOutputBytes: 1000 }));
    expect(error.details?.reason).toBe('git_output_too_large');
    // The work is compared with the base commit, commits included: committing would not make it smaller.
    expect(error.message).toContain('.gitignore');
    expect(error.message).not.toContain('commit or remove');

    const cut = await runGit(git, { cwd: folder, args: ['diff-tree'], maxOutputBytes: 1000, cutOutput: true });
    expect(cut).toMatchObject({ exitCode: 0, cut: true });
    expect(cut.stdout.length).toBe(1000);
  });

  it("answers git's exit code and stderr as they are", async () => {
    const git = await fakeGit('echo "fatal: not a git repository" >&2; exit 128');
    expect(await runGit(git, { cwd: folder, args: ['rev-parse'] })).toMatchObject({
      exitCode: 128,
      stderr: 'fatal: not a git repository\n',
      cut: false,
    });
  });
});

describe('runGitRetryingLocks', () => {
  const holdLockTwice = [
    'calls=$(($(cat "$COUNTER" 2>/dev/null || echo 0) + 1)); echo $calls > "$COUNTER"',
    `if [ $calls -le 2 ]; then echo "fatal: Unable to create '/repository/.git/index.lock': File exists." >&2; exit 128; fi`,
    'echo done',
  ].join('\n');

  it('tries again while another git holds a lock, until it is free', async () => {
    const git = await fakeGit(holdLockTwice);
    const result = await runGitRetryingLocks(git, { cwd: folder, args: ['worktree', 'add'] });
    expect(result).toMatchObject({ exitCode: 0 });
    expect(result.stdout.toString()).toBe('done\n');
    expect(await readFile(path.join(folder, 'calls'), 'utf8')).toBe('3\n');
  });

  it('tries again when another git removed a worktree this one was reading', async () => {
    const vanishedOnce = [
      'calls=$(($(cat "$COUNTER" 2>/dev/null || echo 0) + 1)); echo $calls > "$COUNTER"',
      // What git 2.39 printed when ten worktree removals on one repository raced.
      `if [ $calls -le 1 ]; then echo "fatal: Invalid path '/repository/.git/worktrees/ses_aa84': No such file or directory" >&2; exit 128; fi`,
      'echo removed',
    ].join('\n');
    const git = await fakeGit(vanishedOnce);
    const result = await runGitRetryingLocks(git, { cwd: folder, args: ['worktree', 'remove', '--force', '/w'] });
    expect(result).toMatchObject({ exitCode: 0 });
    expect(await readFile(path.join(folder, 'calls'), 'utf8')).toBe('2\n');
  });

  it('answers any other failure at once', async () => {
    const git = await fakeGit('echo x >> "$COUNTER"; echo "fatal: invalid reference: nope" >&2; exit 128');
    const result = await runGitRetryingLocks(git, { cwd: folder, args: ['worktree', 'add'] });
    expect(result.exitCode).toBe(128);
    expect(await readFile(path.join(folder, 'calls'), 'utf8')).toBe('x\n');
  });
});
