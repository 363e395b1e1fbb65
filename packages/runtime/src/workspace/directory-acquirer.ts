import { stat } from 'node:fs/promises';
import path from 'node:path';
import { AgentError, type WorkspaceStatus } from '@tether/protocol';
import type { WorkspaceAcquirer } from './workspace-acquirer.js';

/**
 * The built-in `directory` kind: an existing directory the agent runs in, checked before anything
 * is spawned. Tether never changes or removes it, so it has no baseline, changes or diff of its own.
 */
export const directoryAcquirer: WorkspaceAcquirer = {
  kind: 'directory',
  async prepare({ workspace }) {
    if (workspace.kind !== 'directory') throw new Error(`The directory acquirer was given a ${workspace.kind}.`);
    return directoryStatus(await checkDirectory(workspace.path));
  },
  restore: async (prepared) => ({ ...prepared, state: 'ready', keptBecause: null }),
  release: async (prepared) => ({ ...prepared, state: 'kept', keptBecause: null }),
};

function directoryStatus(directory: string): WorkspaceStatus {
  return { kind: 'directory', directory, worktree: null, state: 'ready', keptBecause: null, changedFiles: null };
}

/** An absolute path to an existing directory, normalized; invalid_workspace otherwise. */
async function checkDirectory(directory: string): Promise<string> {
  if (!path.isAbsolute(directory)) {
    throw new AgentError({
      code: 'invalid_workspace',
      message: 'The workspace path must be absolute. Resolve it (e.g. against your current directory) and try again.',
      details: { reason: 'not_absolute' },
    });
  }
  let isDirectory = false;
  try {
    isDirectory = (await stat(directory)).isDirectory();
  } catch {
    throw new AgentError({
      code: 'invalid_workspace',
      message: `The workspace directory ${directory} does not exist or cannot be read. Create it or pick another directory.`,
      details: { reason: 'missing' },
    });
  }
  if (!isDirectory) {
    throw new AgentError({
      code: 'invalid_workspace',
      message: `The workspace ${directory} is not a directory. Pass the directory to work in.`,
      details: { reason: 'not_directory' },
    });
  }
  return path.normalize(directory);
}
