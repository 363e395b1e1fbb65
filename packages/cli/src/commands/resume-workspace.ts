import { realpath } from 'node:fs/promises';
import path from 'node:path';
import { UsageError } from '../usage-error.js';

async function canonical(directory: string): Promise<string> {
  // A daemon on another machine may name a directory this one does not have: compare as written then.
  return realpath(directory).catch(() => path.resolve(directory));
}

/**
 * `--cwd` with `--resume` is accepted only when it names the session's own workspace (a symlink or
 * a relative path to it included), or for a worktree session the repository it was made from (what
 * `tether run --worktree --cwd REPO` was given): a resumed session cannot move to another directory.
 */
export async function checkResumeWorkspace(
  sessionId: string,
  workspace: string,
  requested: string,
  repository?: string,
): Promise<void> {
  const [own, given, origin] = await Promise.all([
    canonical(workspace),
    canonical(requested),
    repository === undefined ? undefined : canonical(repository),
  ]);
  if (own === given || origin === given) return;
  throw new UsageError(
    `--cwd ${requested} is not the workspace of ${sessionId} (${workspace}); a resumed session keeps its own directory. Drop --cwd, or start a new session there without --resume.`,
  );
}
