import { realpath } from 'node:fs/promises';
import path from 'node:path';
import { UsageError } from '../usage-error.js';

async function canonical(directory: string): Promise<string> {
  // A daemon on another machine may name a directory this one does not have: compare as written then.
  return realpath(directory).catch(() => path.resolve(directory));
}

/**
 * `--cwd` with `--resume` is accepted only when it names the session's own workspace (a symlink or
 * a relative path to it included): a resumed session cannot move to another directory.
 */
export async function checkResumeWorkspace(sessionId: string, workspace: string, requested: string): Promise<void> {
  const [own, given] = await Promise.all([canonical(workspace), canonical(requested)]);
  if (own === given) return;
  throw new UsageError(
    `--cwd ${requested} is not the workspace of ${sessionId} (${workspace}); a resumed session keeps its own directory. Drop --cwd, or start a new session there without --resume.`,
  );
}
