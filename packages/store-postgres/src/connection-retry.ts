import { AgentError } from '@tether/protocol';
import { connectionHint } from './connection-hints.js';
import { describeCause, sqlState, storeFailure } from './store-failure.js';

/** How long a store operation keeps retrying a lost connection before it reports store_unreachable. */
const retryBudgetMs = 10_000;
const firstDelayMs = 100;
const longestDelayMs = 3_200;

/** Messages pg gives a connection that broke, or could not be opened, without a SQLSTATE or errno. */
const brokenConnection =
  /connection terminated|connection error|not queryable|timeout exceeded when trying to connect/i;

/**
 * SQLSTATEs of a connection the server ended: 57P01–57P03 (shutting down, or not yet started), and
 * 25P03, a transaction left idle past the lease ttl (open-postgres-store.ts). Its transaction rolled back.
 */
const connectionEnded = ['57P01', '57P02', '57P03', '25P03'];

/**
 * A failure of the connection rather than of the statement: nothing the server decided. SQLSTATE
 * class 08 (connection exception) or a connection the server ended, an errno (ECONNREFUSED,
 * ECONNRESET…), or pg's own words for a broken connection.
 */
export function isConnectionLoss(error: unknown): boolean {
  if (AgentError.isInstance(error)) return false;
  const state = sqlState(error);
  if (state !== undefined) return state.startsWith('08') || connectionEnded.includes(state);
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return true;
  return error instanceof Error && brokenConnection.test(error.message);
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Runs `work`, and again after a connection loss, waiting 100 ms then twice as long each time (at
 * most 3.2 s) for about 10 s in all; then store_failure, reason store_unreachable. Only for work
 * that is safe to run again after a connection loss: a read, or a transaction that surely rolled
 * back (a lost answer to COMMIT is not a connection loss here: it is commit_outcome_unknown).
 */
export async function retryConnectionLoss<Result>(action: string, work: () => Promise<Result>): Promise<Result> {
  const started = Date.now();
  for (let delayMs = firstDelayMs; ; delayMs = Math.min(delayMs * 2, longestDelayMs)) {
    try {
      return await work();
    } catch (error) {
      if (!isConnectionLoss(error)) throw error;
      const elapsedMs = Date.now() - started;
      if (elapsedMs + delayMs > retryBudgetMs) {
        const cause = describeCause(error);
        throw storeFailure(
          `The store could not ${action}: the connection to the PostgreSQL server kept failing for ${Math.round(elapsedMs / 1000)} s${cause ? ` (${cause})` : ''}. ${connectionHint(error)}`,
          'store_unreachable',
          error,
        );
      }
      await pause(delayMs);
    }
  }
}

/** A transaction whose COMMIT was sent and whose answer was lost (transaction.ts). */
export function isCommitOutcomeUnknown(error: unknown): error is AgentError {
  return AgentError.isInstance(error) && error.details?.reason === 'commit_outcome_unknown';
}

/**
 * For a transaction that is harmless to run twice (a claim, a release): a lost answer to its COMMIT
 * becomes the connection loss it was, so retryConnectionLoss runs it again.
 */
export async function rerunWhenOutcomeUnknown<Result>(work: () => Promise<Result>): Promise<Result> {
  try {
    return await work();
  } catch (error) {
    throw isCommitOutcomeUnknown(error) ? error.cause : error;
  }
}
