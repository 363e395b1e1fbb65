import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createCreatorNamedFolderSync } from '../process/creator-named-folders.js';

/** The folders these files are written in; named for their creator, so a later host can remove a killed one's. */
export const privateTextFolderPrefix = 'tether-prompt-';

/** A text handed to claude as a file instead of an argument, and how to take it away again. */
export interface PrivateTextFile {
  readonly path: string;
  /** Removes the file and its folder; a second call does nothing. */
  remove(): void;
}

/**
 * Writes `text` where only this user can read it: a folder of its own (mkdtemp makes it 0700) and
 * a file created 0600. A session's system-prompt append goes to claude this way
 * (--append-system-prompt-file): as an argument it would be in /proc/PID/cmdline, which every
 * local user can read, and the CLI scans its whole argv for some flags before parsing it.
 */
export function writePrivateTextFile(text: string): PrivateTextFile {
  const folder = createCreatorNamedFolderSync(privateTextFolderPrefix);
  const file = path.join(folder, 'append-system-prompt.txt');
  let removed = false;
  const remove = () => {
    if (removed) return;
    removed = true;
    rmSync(folder, { recursive: true, force: true });
  };
  try {
    writeFileSync(file, text, { encoding: 'utf8', mode: 0o600, flag: 'wx' });
  } catch (error) {
    remove();
    throw error;
  }
  return { path: file, remove };
}
