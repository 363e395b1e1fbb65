import { z } from 'zod';
import { SerializedAgentError } from './errors/agent-error.js';
import { RunId, SessionId } from './identifiers.js';
import { RunOutcome } from './events.js';
import { InteractionRef, InteractionRequest, InteractionStatus } from './interactions.js';
import { PermissionMode } from './permission-mode.js';
import { ContextUsage, PlanLimits } from './plan-limits.js';
import { QueuedInput } from './queued-inputs.js';
import { sessionTitleMaxLength } from './session-title.js';
import { TokenUsage } from './usage.js';
import { Workspace, WorkspaceStatus } from './workspace.js';

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
  /** Where the agent's conversation stood after the run (run.checkpointed); null until reported, or never for an agent without one. */
  checkpoint: z
    .strictObject({
      providerSessionId: z.string(),
      inputMessageId: z.string().nullable(),
      lastMessageId: z.string().nullable(),
    })
    .nullable(),
});
export type RunSnapshot = z.infer<typeof RunSnapshot>;

export const InteractionSnapshot = z.strictObject({
  interactionRef: InteractionRef,
  sessionId: SessionId,
  runId: RunId,
  status: InteractionStatus,
  request: InteractionRequest,
  requestedAt: z.string(),
  settledAt: z.string().nullable(),
});
export type InteractionSnapshot = z.infer<typeof InteractionSnapshot>;

/** How the session's most recent completed run ended. */
export const LastRun = z.strictObject({
  runId: RunId,
  outcome: RunOutcome,
  completedAt: z.string(),
});
export type LastRun = z.infer<typeof LastRun>;

export const SessionSnapshot = z.strictObject({
  sessionId: SessionId,
  provider: z.string(),
  state: SessionState,
  /** The workspace as the host asked for it. */
  workspace: Workspace,
  /** What Tether made of it: where the agent runs, the worktree and branch, kept or removed once released; null for sessions recorded before workspaces were tracked. */
  workspaceStatus: WorkspaceStatus.nullable(),
  configuration: z.record(z.string(), z.unknown()),
  ephemeral: z.boolean(),
  activeRunId: RunId.nullable(),
  /** The model in effect as last reported (resolved by the agent); null until known. */
  model: z.string().nullable(),
  /** The permission mode in effect as last reported; null until known (the user's default). */
  permissionMode: PermissionMode.nullable(),
  /**
   * The modes the agent cannot enter live right now (set_permission_mode answers requires_restart;
   * with `restart: true` it restarts the agent in that mode). Asked of the provider at read time, so
   * it follows the agent process starting and stopping: empty while no process runs (a mode then
   * applies from the next launch) and for a closed session.
   */
  modesRequiringRestart: z.array(PermissionMode),
  /** Interactions still waiting for (or being delivered from) the host. */
  pendingInteractions: z.array(InteractionSnapshot),
  /** Follow-ups sent while a run was active that have not started, been folded in or been cancelled yet, oldest first. */
  queuedInputs: z.array(QueuedInput),
  /** The account's plan limits as last reported (PlanLimits says when an account has none); null until the agent reported anything. */
  limits: PlanLimits.nullable(),
  /** How full the context window was after the last run; null until measured. */
  contextUsage: ContextUsage.nullable(),
  providerSessionId: z.string().nullable(),
  /** Set on a fork: the session (and run) its conversation was copied from. */
  forkedFrom: z.strictObject({ sessionId: SessionId, runId: RunId.nullable() }).nullable(),
  usage: TokenUsage,
  /**
   * The text of the session's first turn, whitespace collapsed, at most 200 characters (cut with an
   * ellipsis); set once, never changed. Control runs (slash commands) do not title a session, and
   * neither do redacted turns (redactInput): the title holds only text the log holds, so a session
   * that redacts its input stays null. Null until then.
   */
  title: z.string().max(sessionTitleMaxLength).nullable(),
  /** The most recent completed run (turn or control); null until one completes. */
  lastRun: LastRun.nullable(),
  lastSeq: z.number().int().nonnegative(),
  createdAt: z.string(),
  /** When the session's own facts (state, settings, usage, process) last changed; streamed output and interactions do not move it. */
  updatedAt: z.string(),
  /**
   * When the session last did something a supervisor sees: any event but process and diagnostic
   * housekeeping (turns, output, tool activity, interactions, run ends, open, close). What to sort by.
   */
  lastActivityAt: z.string(),
});
export type SessionSnapshot = z.infer<typeof SessionSnapshot>;
