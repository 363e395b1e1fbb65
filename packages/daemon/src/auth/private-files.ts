import { randomBytes } from 'node:crypto';
import { chmod, mkdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** Creates the data directory if missing, readable by its owner only (it holds the token). */
export async function ensurePrivateDirectory(directory: string): Promise<void> {
  const created = await mkdir(directory, { recursive: true, mode: 0o700 });
  // mkdir's mode passes through the umask; say it again for the directory we made.
  if (created !== undefined) await chmod(directory, 0o700);
}

/**
 * Writes a file only its owner can read, atomically: readers see the old content or the new one,
 * never a half-written file, and a rotated token never exists with wider permissions.
 */
export async function writePrivateFile(filePath: string, content: string): Promise<void> {
  const temporary = path.join(path.dirname(filePath), `.${path.basename(filePath)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    await writeFile(temporary, content, { mode: 0o600, flag: 'wx' });
    await chmod(temporary, 0o600);
    await rename(temporary, filePath);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}
