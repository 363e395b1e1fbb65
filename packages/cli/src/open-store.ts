import { AgentError, type ErrorDetails } from '@tether/protocol';
import type { TetherStore } from '@tether/runtime';
import { checkPostgresStore, openPostgresStore } from '@tether/store-postgres';
import { existsSync } from 'node:fs';
import { rmdir } from 'node:fs/promises';
import path from 'node:path';
import { databaseFileName, lockDataDirectory, openSqliteStore } from '@tether/store-sqlite';
import type { StoreLocation } from './commands/store-option.js';
import { embeddedPostgresFileName, type RunningPostgres, startEmbeddedPostgres } from './embedded-postgres.js';
import { ownerIdFileName, removeOwnerId, storeOwnerId } from './store-owner-id.js';
import { UsageError } from './usage-error.js';

/** How a store shared by several daemons is run (PostgreSQL only; the data dir's SQLite ignores it). */
export interface SharedStoreSettings {
  /** How long a lease outlives its holder's last heartbeat (default: the store's, 15 s). */
  readonly leaseTtlMs?: number | undefined;
  /**
   * Told what the opening is doing that a person should know of: an embedded PostgreSQL server
   * that exited on its own (and whether it was started again), or a wait for the process this data
   * dir's owner id last ran in (a crash or a restart a moment ago) to show whether it still runs.
   */
  readonly onNotice?: ((notice: string) => void) | undefined;
}

/** What the messages may say about a PostgreSQL database, and what they never may. */
interface PostgresTarget {
  readonly description: string;
  readonly secrets: readonly string[];
}

/**
 * The one place the CLI chooses a store: the data dir's SQLite database, or PostgreSQL (at a URL,
 * or a server started here on the data dir's cluster). With PostgreSQL the data dir is still taken
 * (its lock) for as long as the store is open, since it still holds what is local to this machine
 * (the daemon's token and daemon.json, the worktrees, the owner id): one process at a time per data
 * dir, as with SQLite. Either way the caller gets one store whose close() gives everything back.
 */
export async function openStore(
  dataDir: string,
  location: StoreLocation,
  settings: SharedStoreSettings = {},
): Promise<TetherStore> {
  if (location.kind === 'data-dir') {
    refuseDataDirOfSharedStore(dataDir);
    return openSqliteStore({ dataDir });
  }
  const madeDataDir = !existsSync(dataDir);
  const lock = lockDataDirectory(dataDir);
  let server: RunningPostgres | undefined;
  let target: PostgresTarget = location.kind === 'postgres' ? location : { description: 'embedded', secrets: [] };
  let madeOwnerId = false;
  try {
    const { ownerId, made } = await storeOwnerId(dataDir);
    madeOwnerId = made;
    let url: string;
    if (location.kind === 'embedded-postgres') {
      server = await startEmbeddedPostgres(dataDir, settings.onNotice);
      target = { description: server.description, secrets: [server.password] };
      url = server.url;
    } else url = location.url;
    const store = await openPostgresStore({
      url,
      ownerId,
      // The data dir's id: a copy of it running beside this one is refused, not let in to take its sessions.
      exclusiveOwner: true,
      onOwnerWait: (waitMs) =>
        settings.onNotice?.(
          `this data dir's last process on the store renewed its heartbeat moments ago (a crash or a restart?): watching it for up to ${Math.ceil(waitMs / 1000)} s before starting, to be sure it no longer runs`,
        ),
      ...(settings.leaseTtlMs === undefined ? {} : { leaseTtlMs: settings.leaseTtlMs }),
    });
    return releasingOnClose(store, async () => {
      try {
        await server?.stop();
      } finally {
        lock.release();
      }
    });
  } catch (error) {
    await server?.stop().catch(() => undefined);
    // A data dir never opened on the store is not marked as keeping its sessions there.
    if (madeOwnerId) await removeOwnerId(dataDir).catch(() => undefined);
    lock.release();
    // Nor is a data dir made for it left behind, empty (rmdir removes only an empty folder).
    if (madeDataDir) await rmdir(dataDir).catch(() => undefined);
    throw withoutSecrets(error, target);
  }
}

/**
 * What tether doctor says of the store a command would open over this data dir, read without
 * opening it (nothing migrated, locked or started); null for the data dir's own SQLite database,
 * which the data dir's row covers.
 */
export async function storeCheck(
  dataDir: string,
  location: StoreLocation,
): Promise<{ readonly ok: boolean; readonly detail: string } | null> {
  if (location.kind === 'data-dir') {
    try {
      refuseDataDirOfSharedStore(dataDir);
      return null;
    } catch (error) {
      return { ok: false, detail: (error as Error).message };
    }
  }
  if (location.kind === 'embedded-postgres')
    return { ok: true, detail: "PostgreSQL in the data dir's own cluster (started by each command that uses it)" };
  try {
    const { schemaVersion, latestSchemaVersion } = await checkPostgresStore(location.url);
    const schema =
      schemaVersion === 0
        ? 'no Tether has used it yet (the first to open it makes its tables)'
        : schemaVersion < latestSchemaVersion
          ? `schema version ${schemaVersion} (this Tether brings it to ${latestSchemaVersion} when it opens it)`
          : `schema version ${schemaVersion}`;
    return { ok: true, detail: `PostgreSQL at ${location.description}: ${schema}` };
  } catch (error) {
    const refused = withoutSecrets(error, location);
    return { ok: false, detail: `${refused.message} [${refused.code}]` };
  }
}

/** Below this length a password is taken out only where a URL spells it: anywhere, it would garble the message and, by what it garbled, tell what it is. */
const shortSecretLength = 8;

/**
 * The password out of a text: where a URL spells it (`:PASSWORD@`, `password=PASSWORD`), and, for
 * one long enough not to be a word of the message ("store", "127"), wherever it stands.
 */
function scrubbed(text: string, secret: string): string {
  const inUrl = text.split(`:${secret}@`).join(':***@').split(`password=${secret}`).join('password=***');
  return secret.length < shortSecretLength ? inUrl : inUrl.split(secret).join('***');
}

/**
 * A data dir whose sessions are in PostgreSQL (it holds an owner id and no SQLite database) opened
 * without its store would show an empty SQLite store of its own, as if its sessions were gone.
 */
function refuseDataDirOfSharedStore(dataDir: string): void {
  const ownerIdFile = path.join(dataDir, ownerIdFileName);
  if (!existsSync(ownerIdFile) || existsSync(path.join(dataDir, databaseFileName))) return;
  const reach = existsSync(path.join(dataDir, embeddedPostgresFileName))
    ? 'Pass --store embedded-postgres (its own cluster)'
    : 'Pass --store URL (or set TETHER_STORE_URL)';
  throw new UsageError(
    `the data dir ${dataDir} keeps its sessions in PostgreSQL (it has a ${ownerIdFileName} and no ${databaseFileName}). ${reach} to reach them, or remove ${ownerIdFile} to keep this data dir's sessions in its own SQLite database from now on.`,
  );
}

/** The store, whose close() also gives back what was taken for it (after the store's own close). */
function releasingOnClose(store: TetherStore, release: () => Promise<void>): TetherStore {
  const close = async () => {
    try {
      await store.close();
    } finally {
      await release();
    }
  };
  return new Proxy(store, {
    get(target, property) {
      if (property === 'close') return close;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/**
 * The store's error with the URL's password taken out of its message, whatever put it there: no
 * output, log or exit message ever holds it. An error that is not an AgentError becomes
 * store_failure naming the database by its description.
 */
function withoutSecrets(error: unknown, target: PostgresTarget): AgentError {
  const scrub = (text: string) => target.secrets.reduce(scrubbed, text);
  if (AgentError.isInstance(error))
    return new AgentError({
      code: error.code,
      message: scrub(error.message),
      retryable: error.retryable,
      ...(error.details ? { details: JSON.parse(scrub(JSON.stringify(error.details))) as ErrorDetails } : {}),
    });
  return new AgentError({
    code: 'store_failure',
    message: `The PostgreSQL store at ${target.description} could not be opened (${scrub(String((error as Error)?.message ?? error))}). Check the URL, the server and the credentials, then retry.`,
    details: { reason: 'store_open_failed' },
  });
}
