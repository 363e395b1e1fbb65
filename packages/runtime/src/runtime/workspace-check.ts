import { stat } from 'node:fs/promises';
import path from 'node:path';
import { AgentError, type Workspace } from '@tether/protocol';

/** A workspace must be an existing directory, checked before anything is spawned. */
export async function checkWorkspace(requested: Workspace): Promise<Workspace> {
  // TODO(issue 14): git_worktree through its acquirer.
  const workspace =
    requested.kind === 'directory' ? requested : { kind: 'directory' as const, path: requested.repository };
  if (!path.isAbsolute(workspace.path)) {
    throw new AgentError({
      code: 'invalid_workspace',
      message: 'The workspace path must be absolute. Resolve it (e.g. against your current directory) and try again.',
      details: { reason: 'not_absolute' },
    });
  }
  let isDirectory = false;
  try {
    isDirectory = (await stat(workspace.path)).isDirectory();
  } catch {
    throw new AgentError({
      code: 'invalid_workspace',
      message: `The workspace directory ${workspace.path} does not exist or cannot be read. Create it or pick another directory.`,
      details: { reason: 'missing' },
    });
  }
  if (!isDirectory) {
    throw new AgentError({
      code: 'invalid_workspace',
      message: `The workspace ${workspace.path} is not a directory. Pass the directory to work in.`,
      details: { reason: 'not_directory' },
    });
  }
  return { kind: 'directory', path: path.normalize(workspace.path) };
}
