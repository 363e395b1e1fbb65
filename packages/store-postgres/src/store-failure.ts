import { AgentError } from '@tether/protocol';
import { connectionHint } from './connection-hints.js';

/**
 * A short, non-secret description of a low-level failure: PostgreSQL's SQLSTATE or an errno code.
 * Never the server's message: it can quote the values a statement carried (a key, a title).
 */
export function describeCause(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { code } = error as { code?: unknown };
  if (typeof code !== 'string') return undefined;
  if (/^[0-9A-Z]{5}$/.test(code)) return `SQLSTATE ${code}`;
  if (/^E[A-Z_]+$/.test(code)) return code;
  return undefined;
}

export function storeFailure(message: string, reason?: string, cause?: unknown): AgentError {
  return new AgentError({ code: 'store_failure', message, ...(reason ? { details: { reason } } : {}), cause });
}

/** The SQLSTATE of a failed statement, when the server gave one. */
export function sqlState(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

/** Runs a store operation, turning anything that is not already an AgentError into store_failure. */
export async function guardStore<Result>(action: string, work: () => Promise<Result>): Promise<Result> {
  try {
    return await work();
  } catch (error) {
    if (AgentError.isInstance(error)) throw error;
    const cause = describeCause(error);
    throw storeFailure(
      `The store could not ${action}${cause ? ` (${cause})` : ''}. ${connectionHint(error)}`,
      undefined,
      error,
    );
  }
}
