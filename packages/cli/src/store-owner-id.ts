import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { writePrivateFile } from '@tether/daemon';
import { readPrivateDataFile } from '@tether/store-sqlite';

/** The file in the data dir that holds this runtime's identity among those sharing a store. */
export const ownerIdFileName = 'store-owner-id';

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * The data dir's owner id, made once (a random UUID, mode 0600, written atomically) and read back
 * ever after: a restarted daemon is the same owner, so it takes its sessions' leases straight back
 * instead of waiting for them to expire. The caller holds the data dir's lock, so no other process
 * writes the file meanwhile. A file holding anything but a UUID is replaced. `made`: written by this call.
 */
export async function storeOwnerId(dataDir: string): Promise<{ readonly ownerId: string; readonly made: boolean }> {
  const file = path.join(dataDir, ownerIdFileName);
  const existing = readPrivateDataFile(
    file,
    `Remove it (a new owner id is made; sessions this data dir's daemon held are taken back once their leases expire).`,
  )?.trim();
  if (existing !== undefined && uuidPattern.test(existing)) return { ownerId: existing, made: false };
  const ownerId = randomUUID();
  await writePrivateFile(file, `${ownerId}\n`);
  return { ownerId, made: true };
}

/** Takes back an owner id made for a store that then did not open: the data dir was never that store's. */
export async function removeOwnerId(dataDir: string): Promise<void> {
  await rm(path.join(dataDir, ownerIdFileName), { force: true });
}
