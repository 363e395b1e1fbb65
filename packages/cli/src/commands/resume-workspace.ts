import { realpath } from 'node:fs/promises';
import path from 'node:path';
import { type SessionSnapshot, sessionDirectories } from '@tether/protocol';
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
export async function checkResumeWorkspace(snapshot: SessionSnapshot, requested: string): Promise<void> {
  const directories = sessionDirectories(snapshot.workspace, snapshot.workspaceStatus);
  const [given, ...accepted] = await Promise.all([requested, ...directories].map(canonical));
  if (accepted.includes(given!)) return;
  throw new UsageError(
    `--cwd ${requested} is not the workspace of ${snapshot.sessionId} (${directories[0]}); a resumed session keeps its own directory. Drop --cwd, or start a new session there without --resume.`,
  );
}
