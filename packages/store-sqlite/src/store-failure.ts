import { AgentError } from '@tether/protocol';

/** A short, non-secret description of a low-level failure: SQLite's own words or an errno code. */
export function describeCause(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { errstr, code } = error as { errstr?: unknown; code?: unknown };
  if (typeof errstr === 'string') return errstr;
  if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return code;
  return undefined;
}

export function storeFailure(message: string, reason?: string, cause?: unknown): AgentError {
  return new AgentError({ code: 'store_failure', message, ...(reason ? { details: { reason } } : {}), cause });
}

/** Runs a store operation, turning anything that is not already an AgentError into store_failure. */
export function guardStore<Result>(action: string, work: () => Result): Result {
  try {
    return work();
  } catch (error) {
    if (AgentError.isInstance(error)) throw error;
    const cause = describeCause(error);
    if (isDatabaseDamaged(error)) {
      // Unlike a full disk, retrying changes nothing.
      throw new AgentError({
        code: 'store_failure',
        message: `The store could not ${action}: its database file (tether.db in the data directory) is damaged${cause ? ` (${cause})` : ''}. Move it and its -wal file aside (keep them for a recovery) to start again with no stored sessions, or put back a copy from a backup.`,
        retryable: false,
        details: { reason: 'database_damaged' },
        cause: error,
      });
    }
    throw storeFailure(
      `The store could not ${action}${cause ? ` (${cause})` : ''}. Check the data directory (disk space, permissions) and retry.`,
      undefined,
      error,
    );
  }
}

/** SQLITE_CORRUPT or SQLITE_NOTADB: the file is no database, or a damaged one; retrying will not change it. */
function isDatabaseDamaged(error: unknown): boolean {
  const errcode = (error as { errcode?: unknown } | null)?.errcode;
  return typeof errcode === 'number' && ((errcode & 0xff) === 11 || (errcode & 0xff) === 26);
}

/** SQLITE_BUSY or SQLITE_LOCKED, extended codes included: another connection holds the database. */
export function isDatabaseBusy(error: unknown): boolean {
  const errcode = (error as { errcode?: unknown } | null)?.errcode;
  return typeof errcode === 'number' && ((errcode & 0xff) === 5 || (errcode & 0xff) === 6);
}
