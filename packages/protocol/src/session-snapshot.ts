import { z } from 'zod';
import { SerializedAgentError } from './errors/agent-error.js';
import { RunId, SessionId } from './identifiers.js';
import { RunOutcome } from './events.js';
import { TokenUsage } from './usage.js';
import { Workspace } from './workspace.js';

/**
 * idle: open, no run; running: a run is active; waiting: a run waits for the host (an approval or
 * a question); closed: no further turns until reopened.
 */
export const SessionState = z.enum(['idle', 'running', 'waiting', 'closed']);
export type SessionState = z.infer<typeof SessionState>;

export const RunStatus = z.enum(['running', 'completed']);
export type RunStatus = z.infer<typeof RunStatus>;

export const RunSnapshot = z.strictObject({
  runId: RunId,
  sessionId: SessionId,
  status: RunStatus,
  outcome: RunOutcome.nullable(),
  error: SerializedAgentError.nullable(),
  usage: TokenUsage.nullable(),
  startedAt: z.string(),
  completedAt: z.string().nullable(),
});
export type RunSnapshot = z.infer<typeof RunSnapshot>;

export const SessionSnapshot = z.strictObject({
  sessionId: SessionId,
  provider: z.string(),
  state: SessionState,
  workspace: Workspace,
  configuration: z.record(z.string(), z.unknown()),
  ephemeral: z.boolean(),
  activeRunId: RunId.nullable(),
  providerSessionId: z.string().nullable(),
  usage: TokenUsage,
  lastSeq: z.number().int().nonnegative(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type SessionSnapshot = z.infer<typeof SessionSnapshot>;
