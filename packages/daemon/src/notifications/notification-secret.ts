import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { ensureDataDirectory, readPrivateDataFile } from '@tether/store-sqlite';
import { writePrivateFile } from '../auth/private-files.js';

export const notificationSecretFileName = 'notification-secret';

const untrustedSecretRemedy = `Delete it: the daemon then writes a new private one (receivers must be given the new secret).`;

/**
 * The data dir's signing secret for receivers that bring none: read when it is ours alone, else
 * generated (32 random bytes) and written 0600. The secret itself is never logged or printed; the
 * daemon names only the file, for the receiver's owner to copy.
 */
export async function ensureNotificationSecret(dataDir: string): Promise<{ secret: string; filePath: string }> {
  const filePath = path.join(path.resolve(dataDir), notificationSecretFileName);
  // A file that is not ours alone fails the start (data_dir_unsafe): unlike the token, a secret
  // receivers already hold is not silently replaced; its owner decides.
  const existing = readPrivateDataFile(filePath, untrustedSecretRemedy);
  const secret = existing?.trim() ?? '';
  if (secret.length >= 16) return { secret, filePath };
  ensureDataDirectory(path.resolve(dataDir));
  const created = randomBytes(32).toString('base64url');
  await writePrivateFile(filePath, `${created}\n`);
  return { secret: created, filePath };
}
