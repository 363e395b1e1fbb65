import { AgentError } from '@tether/protocol';
import type { AgentRuntime } from '@tether/runtime';

/**
 * A stream asked to start past the session's last event (a client's cursor from another store, a
 * store restored from a backup) would wait silently for events it then skips: refused, saying where
 * the log ends. Past what the snapshot says, the store itself is asked (a daemon sharing it may have
 * read the session before its owner's latest events).
 */
export async function checkStartPosition(runtime: AgentRuntime, sessionId: string, afterSeq: number): Promise<void> {
  const { lastSeq } = await runtime.getSession(sessionId);
  if (afterSeq <= lastSeq) return;
  const [event] = await runtime.readEvents(sessionId, { afterSeq: afterSeq - 1, limit: 1 });
  if (event?.seq === afterSeq) return;
  throw new AgentError({
    code: 'invalid_command',
    message: `The stream was asked to start after event ${afterSeq}, but the session's last event is ${lastSeq}: resume from the last seq you received (at most ${lastSeq}), or from 0 for the whole history.`,
    details: { reason: 'start_past_end' },
  });
}
