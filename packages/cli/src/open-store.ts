import { AgentError, type ErrorDetails } from '@tether/protocol';
import type { TetherStore } from '@tether/runtime';
import { openPostgresStore } from '@tether/store-postgres';
import { lockDataDirectory, openSqliteStore } from '@tether/store-sqlite';
import type { StoreLocation } from './commands/store-option.js';

/**
 * The one place the CLI chooses a store: the data dir's SQLite database, or PostgreSQL. With
 * PostgreSQL the data dir is still taken (its lock) for as long as the store is open, since it
 * still holds what is local to this machine (the daemon's token and daemon.json, the worktrees):
 * one process at a time per data dir, as with SQLite. Either way the caller gets one store whose
 * close() gives everything back.
 */
export async function openStore(dataDir: string, location: StoreLocation): Promise<TetherStore> {
  if (location.kind === 'data-dir') return openSqliteStore({ dataDir });
  const lock = lockDataDirectory(dataDir);
  try {
    const store = await openPostgresStore({ url: location.url });
    return releasingOnClose(store, lock);
  } catch (error) {
    lock.release();
    throw withoutSecrets(error, location);
  }
}

function releasingOnClose(store: TetherStore, lock: { release(): void }): TetherStore {
  const close = async () => {
    try {
      await store.close();
    } finally {
      lock.release();
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
function withoutSecrets(error: unknown, location: Extract<StoreLocation, { kind: 'postgres' }>): AgentError {
  const scrub = (text: string) => location.secrets.reduce((result, secret) => result.split(secret).join('***'), text);
  if (AgentError.isInstance(error))
    return new AgentError({
      code: error.code,
      message: scrub(error.message),
      retryable: error.retryable,
      ...(error.details ? { details: JSON.parse(scrub(JSON.stringify(error.details))) as ErrorDetails } : {}),
    });
  return new AgentError({
    code: 'store_failure',
    message: `The PostgreSQL store at ${location.description} could not be opened (${scrub(String((error as Error)?.message ?? error))}). Check the URL, the server and the credentials, then retry.`,
    details: { reason: 'store_open_failed' },
  });
}
