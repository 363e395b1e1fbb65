import { stat } from 'node:fs/promises';

/**
 * Why a data dir path can never be one: it is a file, or a file stands in its path. Null when it is a
 * directory or does not exist yet (made on first use), or when what fails is for the command to report.
 */
export async function notADirectory(dataDir: string): Promise<string | null> {
  try {
    return (await stat(dataDir)).isDirectory() ? null : 'is not a directory';
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOTDIR'
      ? 'is not a directory (a file stands in its path)'
      : null;
  }
}
