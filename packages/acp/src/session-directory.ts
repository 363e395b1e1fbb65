import { realpath } from 'node:fs/promises';
import path from 'node:path';
import { AgentError, type SessionSnapshot, sessionDirectories } from '@tether/protocol';
import { sessionDirectory } from './session-info.js';

/**
 * A cwd the client sent, as one spelling per directory: "/x/ws/", "/x/ws/." and "/x//ws" are the
 * same folder, and a session is stored, listed and compared under that one spelling. ACP requires
 * an absolute path; a relative one has no meaning on the agent's side and is refused.
 */
export function clientDirectory(cwd: string): string {
  if (!path.isAbsolute(cwd)) {
    throw new AgentError({
      code: 'invalid_command',
      message: `cwd must be an absolute path (ACP requires one); "${cwd}" is relative.`,
    });
  }
  return path.resolve(cwd);
}

/** A symlink to a session's folder is that folder; one this machine lacks (a daemon's elsewhere) compares as written. */
async function canonical(directory: string): Promise<string> {
  return realpath(directory).catch(() => path.resolve(directory));
}

/** Compares canonical folders, each read once per use (a session/list page names the same folders again and again). */
export class DirectoryMatcher {
  readonly #canonical = new Map<string, Promise<string>>();

  #of(directory: string): Promise<string> {
    let found = this.#canonical.get(directory);
    if (!found) {
      found = canonical(directory);
      this.#canonical.set(directory, found);
    }
    return found;
  }

  /** Whether the session's agent works in `cwd` (a client directory), by the rule session/load applies. */
  async accepts(snapshot: SessionSnapshot, cwd: string): Promise<boolean> {
    const [given, ...accepted] = await Promise.all(
      [cwd, ...sessionDirectories(snapshot.workspace, snapshot.workspaceStatus)].map((d) => this.#of(d)),
    );
    return accepted.includes(given!);
  }
}

/**
 * Refuses to load (or resume) a session in a folder other than its own: its agent's tools would go on
 * running in its own folder while the editor showed and edited the other one.
 */
export async function requireSessionDirectory(snapshot: SessionSnapshot, cwd: string): Promise<void> {
  if (await new DirectoryMatcher().accepts(snapshot, cwd)) return;
  const own = sessionDirectory(snapshot);
  const repository = snapshot.workspaceStatus?.worktree?.repository;
  const where = repository === undefined ? own : `${own} (a worktree of ${repository})`;
  throw new AgentError({
    code: 'invalid_workspace',
    message: `Session ${snapshot.sessionId} belongs to ${where}, not ${cwd}: its agent works there whatever the editor shows. Open ${repository ?? own} to load it, or start a new session in ${cwd}.`,
    details: { reason: 'not_the_session_directory' },
  });
}
