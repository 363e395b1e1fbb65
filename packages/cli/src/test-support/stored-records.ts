import { openSqliteStore } from '@tether/store-sqlite';

/**
 * What a data dir recorded for a session's runs, read after tether exited (opening it also proves
 * the lock was released).
 */
export async function storedRuns(
  dataDir: string,
  sessionId: string,
): Promise<{ status: string; outcome: string | null }[]> {
  const store = await openSqliteStore({ dataDir });
  try {
    return (await store.listRuns(sessionId)).map((run) => ({ status: run.status, outcome: run.outcome }));
  } finally {
    await store.close();
  }
}
