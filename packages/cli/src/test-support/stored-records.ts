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

/** How each run of a session ended, with its error's code and reason (null without one), read after the daemon or tether exited. */
export async function storedRunEnds(
  dataDir: string,
  sessionId: string,
): Promise<{ outcome: string | null; errorCode: string | null; reason: unknown }[]> {
  const store = await openSqliteStore({ dataDir });
  try {
    return (await store.listRuns(sessionId)).map((run) => ({
      outcome: run.outcome,
      errorCode: run.error?.code ?? null,
      reason: run.error?.details?.reason ?? null,
    }));
  } finally {
    await store.close();
  }
}
