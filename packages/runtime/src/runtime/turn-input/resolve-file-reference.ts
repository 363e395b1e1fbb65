import { realpath } from 'node:fs/promises';
import path from 'node:path';
import type { FileInputPart } from '@tether/protocol';
import { inputRefusal } from './input-refusal.js';

/** A file reference resolved inside the workspace. */
export interface ResolvedFileReference {
  /** Absolute, every symlink followed. */
  readonly path: string;
  /** Relative to the workspace, "/"-separated ("." for the workspace itself). */
  readonly workspacePath: string;
}

/**
 * Resolves a file reference against the workspace. Symlinks are followed first (realpath), so a
 * link that points out of the workspace is refused like a path that does.
 */
export async function resolveFileReference(
  part: FileInputPart,
  context: { readonly workspace: string; readonly index: number },
): Promise<ResolvedFileReference> {
  const { index } = context;
  const named = path.resolve(context.workspace, part.path);
  let resolved: string;
  let root: string;
  try {
    resolved = await realpath(named);
  } catch {
    throw inputRefusal(
      'file_not_found',
      `Input part ${index}: ${named} does not exist. Reference a file or directory inside the workspace (a relative path is resolved against it).`,
    );
  }
  try {
    root = await realpath(context.workspace);
  } catch {
    root = context.workspace; // A workspace that vanished: the path cannot be inside it, refused below.
  }
  const relative = path.relative(root, resolved);
  if (relative === '..' || relative.startsWith(`..${path.sep}`) || path.isAbsolute(relative)) {
    throw inputRefusal(
      'file_outside_workspace',
      `Input part ${index}: ${named} is outside the session's workspace ${context.workspace}${resolved === named ? '' : ` (it leads to ${resolved})`}. Reference files inside the workspace only, or attach the content as text.`,
    );
  }
  const workspacePath = relative === '' ? '.' : relative.split(path.sep).join('/');
  // Agents take a file as a mention in the prompt (Claude Code: @path): "#" starts a line range
  // there, and a path with both whitespace and '"' cannot be quoted, so such a file would silently not arrive.
  if (workspacePath.includes('#') || (/\s/.test(workspacePath) && workspacePath.includes('"'))) {
    throw inputRefusal(
      'file_not_mentionable',
      `Input part ${index}: ${workspacePath} cannot be passed as a file reference (a "#", or whitespace together with '"', in its path). Rename it, or attach its content as text.`,
    );
  }
  return { path: resolved, workspacePath };
}
