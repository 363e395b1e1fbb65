import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** git in one repository, as a test runs it: its stdout. */
export type GitRunner = (...args: string[]) => string;

/**
 * A real git repository in `folder` (made if missing) whose first commit holds `files`, for tests of
 * worktree workspaces. git runs with the given environment (a test's own HOME, so the machine's
 * ~/.gitconfig never applies) plus a fixed identity, and no system configuration.
 */
export async function createGitRepository(
  folder: string,
  files: Readonly<Record<string, string>>,
  environment: Readonly<Record<string, string>>,
): Promise<GitRunner> {
  await mkdir(folder, { recursive: true });
  const git: GitRunner = (...args) =>
    execFileSync('git', ['-c', 'user.name=Tether Test', '-c', 'user.email=test@tether.invalid', ...args], {
      cwd: folder,
      env: { ...environment, GIT_CONFIG_NOSYSTEM: '1' },
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  git('init', '--quiet', '--initial-branch=main');
  for (const [name, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(folder, name)), { recursive: true });
    await writeFile(path.join(folder, name), content);
  }
  git('add', '--all');
  git('commit', '--quiet', '--message', 'First commit');
  return git;
}
