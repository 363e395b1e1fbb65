import { AgentError } from '@tether/protocol';
import type { TetherStore } from '../../store/tether-store.js';

/**
 * A fork shows the turns of the session it was forked from, but their runs stay that session's: a
 * fork or rewind naming one is told whose run it is (looked up only once refused), so it can be
 * forked from there. Any other refusal is given back as it was.
 */
export async function namingTheRunsSession(
  refusal: unknown,
  store: TetherStore,
  sessionId: string,
  runId: string | undefined,
): Promise<unknown> {
  if (runId === undefined || !AgentError.isInstance(refusal) || refusal.code !== 'run_not_found') return refusal;
  const run = await store.getRun(runId).catch(() => undefined);
  if (run === undefined || run.sessionId === sessionId) return refusal;
  return new AgentError({
    code: 'run_not_found',
    message: `That run is session ${run.sessionId}'s, not this session's (a fork shows the earlier turns of the session it was forked from, but they stay that session's runs). Fork ${run.sessionId} at it instead (fork_session with atRunId).`,
    details: { reason: 'other_session', sessionId: run.sessionId },
  });
}
