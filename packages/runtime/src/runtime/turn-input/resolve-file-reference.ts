import { realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import type { FileInputPart } from '@tether/protocol';
import { inputRefusal } from './input-refusal.js';

/** A file reference resolved inside the workspace. */
export interface ResolvedFileReference {
  /** Absolute, every symlink followed. */
  readonly path: string;
  /** Relative to the workspace, "/"-separated ("." for the workspace itself). */
  readonly workspacePath: string;
  /** What it is: a follow-up's reference is checked again when it starts, and has to be the same kind then. */
  readonly kind: FileReferenceKind;
}

export type FileReferenceKind = 'file' | 'directory';

export interface FileReferenceContext {
  /** The folder the agent works in. */
  readonly workspace: string;
  /** When the workspace is a git worktree: the repository's main checkout it was made from. */
  readonly repository?: string | undefined;
  /** The part's position in the turn, for the refusal's message. */
  readonly position: string;
  /**
   * Checking again a reference resolved before (a queued follow-up about to start): what it was
   * then. A file that became a directory (or the reverse) would reach the agent as something else.
   */
  readonly resolvedBefore?: FileReferenceKind | undefined;
}

/**
 * Resolves a file reference against the workspace. Symlinks are followed first (realpath), so a
 * link that points out of the workspace is refused like a path that does. In a worktree session a
 * path in the repository it was made from names the worktree's copy: the host knows the repository
 * (it asked for the worktree by it), while the worktree's folder is named after the new session.
 */
export async function resolveFileReference(
  part: FileInputPart,
  context: FileReferenceContext,
): Promise<ResolvedFileReference> {
  const { position } = context;
  const asked = path.resolve(context.workspace, part.path);
  const named = await inWorktree(asked, context);
  let resolved: string;
  let root: string;
  try {
    resolved = await realpath(named);
  } catch {
    throw inputRefusal(
      'file_not_found',
      named === asked
        ? `Input part ${position}: ${named} does not exist. Reference a file or directory inside the workspace${path.isAbsolute(part.path) ? '' : ' (a relative path is resolved against it)'}.`
        : `Input part ${position}: the session's worktree has no ${path.relative(context.workspace, named) || '.'} (${asked} is in the repository the worktree was made from; what was not committed there is not in it). Commit the file, or attach its content as text.`,
    );
  }
  try {
    root = await realpath(context.workspace);
  } catch {
    root = context.workspace; // A workspace that vanished: the path cannot be inside it, refused below.
  }
  if (!isInside(root, resolved)) {
    throw inputRefusal(
      'file_outside_workspace',
      `Input part ${position}: ${named} is outside the session's workspace ${context.workspace}${resolved === named ? '' : ` (it leads to ${resolved})`}. Reference files inside the workspace only, or attach the content as text.`,
    );
  }
  // A pipe, socket or device has no content to attach: the agent would block reading it (the CLI
  // waits ~20 s on a pipe nobody writes to) or read something endless.
  const found = await stat(resolved).catch(() => undefined);
  if (found && !found.isFile() && !found.isDirectory()) {
    throw inputRefusal(
      'file_not_regular',
      `Input part ${position}: ${named} is neither a regular file nor a directory (a pipe, socket or device). Reference a file or directory, or attach the content as text.`,
    );
  }
  const kind: FileReferenceKind = found?.isDirectory() ? 'directory' : 'file';
  if (context.resolvedBefore !== undefined && context.resolvedBefore !== kind) {
    throw inputRefusal(
      'file_kind_changed',
      `Input part ${position}: ${named} was a ${context.resolvedBefore} when the turn was submitted and is a ${kind} now. Reference what is there now, or attach the content as text.`,
    );
  }
  const relative = path.relative(root, resolved);
  const workspacePath = relative === '' ? '.' : relative.split(path.sep).join('/');
  // Agents take a file as a mention in the prompt (Claude Code: @path): "#" starts a line range
  // there, and a path with both whitespace and '"' cannot be quoted, so such a file would silently not arrive.
  // A path that starts or ends with whitespace is trimmed by the agent (inner names are not): it
  // would read no file and say nothing.
  // A line break ends the quoted mention, and what follows it is read anew: "a\n@/etc/hostname" would
  // attach a file outside the workspace. No control character is taken. A '"' at the end is dropped
  // by the agent: 'notes.txt"' would attach notes.txt, another file.
  const edgeWhitespace = workspacePath !== workspacePath.trim();
  if (
    workspacePath.includes('#') ||
    controlCharacter.test(workspacePath) ||
    (/\s/.test(workspacePath) && workspacePath.includes('"')) ||
    workspacePath.endsWith('"') ||
    edgeWhitespace
  ) {
    throw inputRefusal(
      'file_not_mentionable',
      `Input part ${position}: ${JSON.stringify(workspacePath)} cannot be passed as a file reference (a "#", a line break or other control character, whitespace together with '"', a '"' at its end, or whitespace at its start or end, in its path). Rename it, or attach its content as text.`,
    );
  }
  return { path: resolved, workspacePath, kind };
}

/** C0 and C1 controls, DEL, and the Unicode line and paragraph separators. */
const controlCharacter = /[\p{Cc}\u2028\u2029]/u;

/** A path inside the worktree's repository (but not inside the worktree itself) moved to the same place in the worktree. */
async function inWorktree(asked: string, context: FileReferenceContext): Promise<string> {
  if (context.repository === undefined || isInside(context.workspace, asked)) return asked;
  // The repository's path as git gave it is real; the path asked for may go through a link to it.
  const real = await realpath(asked).catch(() => asked);
  for (const candidate of [asked, real]) {
    if (isInside(context.repository, candidate))
      return path.join(context.workspace, path.relative(context.repository, candidate));
  }
  return asked;
}

function isInside(folder: string, candidate: string): boolean {
  const relative = path.relative(folder, candidate);
  return relative === '' || !(relative === '..' || relative.startsWith(`..${path.sep}`) || path.isAbsolute(relative));
}
