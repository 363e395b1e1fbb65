import { chmod, mkdir, realpath, stat } from 'node:fs/promises';
import { workspaceRefusal } from './workspace-refusal.js';

/**
 * The root, made private on first use, as git will print it (symbolic links resolved) so paths compare
 * equal. Whoever can write in it can rename a session's worktree away and put a folder of their own in
 * its place, whose .claude settings run their hooks as this user: a root another user owns, or that
 * group or others can write in, is refused. One of ours that others can only read or enter is
 * tightened to 0700 (a worktree holds the repository's code; nothing can have been planted).
 */
export async function ownedRoot(root: string): Promise<string> {
  await mkdir(root, { recursive: true, mode: 0o700 });
  const real = await realpath(root);
  if (process.platform === 'win32') return real;
  const stats = await stat(real);
  const uid = process.getuid!();
  if (stats.uid !== uid)
    throw workspaceRefusal(
      'worktree_root_unsafe',
      `The worktree root ${real} is owned by uid ${stats.uid}, not by you (uid ${uid}): its owner could swap a session's worktree for a folder of their own. Use a folder of your own (--worktree-root).`,
    );
  if ((stats.mode & 0o022) !== 0)
    throw workspaceRefusal(
      'worktree_root_unsafe',
      `The worktree root ${real} is writable by other users (mode 0${(stats.mode & 0o777).toString(8)}): they could swap a session's worktree for a folder of their own. Check what is in it, run \`chmod 700 ${real}\`, and retry.`,
    );
  if ((stats.mode & 0o077) !== 0) await chmod(real, 0o700);
  return real;
}
