import {
  AgentError,
  checkPageLimit,
  checkSessionIdArgument,
  checkSessionPosition,
  checkSessionState,
  checkStartSeq,
} from '@tether/protocol';
import type { ListSessionsOptions } from './session-listing.js';

/**
 * The runtime's read methods refuse what they cannot read, as the daemon does (invalid_command, the
 * same reasons: the rules are the protocol's, `read-queries.ts`), instead of handing it to the store.
 */

/** The most events one readEvents answers; a larger limit reads this many. */
const eventPageMost = 10_000;

export { checkSessionIdArgument as sessionIdArgument };

function optionsObject(options: unknown): Record<string, unknown> {
  if (options === undefined) return {};
  if (typeof options === 'object' && options !== null) return options as Record<string, unknown>;
  throw new AgentError({
    code: 'invalid_command',
    message: 'Pass the options as an object (or leave them out).',
    details: { reason: 'invalid_options' },
  });
}

/** listSessions' options: a state, a limit from 1, and the position of a listed session to go on after. */
export function listingOptions(options: unknown): ListSessionsOptions {
  const { state, limit, before } = optionsObject(options);
  return {
    ...(state === undefined ? {} : { state: checkSessionState(state) }),
    ...(limit === undefined ? {} : { limit: checkPageLimit(limit) }),
    ...(before === undefined
      ? {}
      : {
          before: checkSessionPosition(
            before,
            '"before" is where the listing goes on: the {createdAt, sessionId} of the last session of the page before (that session itself will do), or left out.',
          ),
        }),
  };
}

/** readEvents' options: after which seq, and how many (from 1; above 10,000 it reads 10,000). */
export function eventPageOptions(options: unknown): { afterSeq?: number; limit?: number } {
  const { afterSeq, limit } = optionsObject(options);
  return {
    ...(afterSeq === undefined ? {} : { afterSeq: checkStartSeq(afterSeq, '"afterSeq"') }),
    ...(limit === undefined ? {} : { limit: checkPageLimit(limit, eventPageMost) }),
  };
}
