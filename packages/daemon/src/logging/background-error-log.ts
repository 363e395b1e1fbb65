import type { AgentError } from '@tether/protocol';
import type { DaemonLogger } from './create-logger.js';

/**
 * The low-level cause of an error as a code only (a SQLSTATE, an errno), never its text: a server's
 * message can quote the values a statement carried (a prompt, a title).
 */
function causeCode(error: AgentError): string | undefined {
  const code = (error.cause as { code?: unknown } | null | undefined)?.code;
  if (typeof code !== 'string') return undefined;
  if (/^[0-9A-Z]{5}$/.test(code)) return `SQLSTATE ${code}`;
  return /^E[A-Z_]+$/.test(code) ? code : undefined;
}

/**
 * A line per failure of the runtime's background work (streamed output, lease sweeps, takeovers):
 * its code, its reason, the low-level cause's code and the error's own message, which Tether writes
 * to say what to do and which never holds a secret or prompt text (the store names its database by
 * host, port and name only).
 */
export function logBackgroundError(logger: DaemonLogger): (error: AgentError) => void {
  return (error) => {
    const reason = error.details?.['reason'];
    const cause = causeCode(error);
    logger.error(
      {
        errorCode: error.code,
        ...(typeof reason === 'string' ? { reason } : {}),
        ...(cause ? { cause } : {}),
        retryable: error.retryable,
      },
      `background work failed (streamed output, a lease sweep or takeover): ${error.message}`,
    );
  };
}
