import { AgentError } from '@tether/protocol';
import type { TetherStore } from '../../store/tether-store.js';

/**
 * Runs a fork or rewind at `runId`. A fork shows the turns of the session it was forked from, but
 * their runs stay that session's: refused run_not_found, the command is told whose run it is (looked
 * up only then), so it can be forked from there. Any other outcome is the command's own.
 */
export async function namingTheRunsSession<Result>(
  store: TetherStore,
  sessionId: string,
  runId: string | undefined,
  command: () => Promise<Result>,
): Promise<Result> {
  try {
    return await command();
  } catch (refusal) {
    throw await ownerNamed(refusal, store, sessionId, runId);
  }
}

async function ownerNamed(
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
