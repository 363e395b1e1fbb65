import { z } from 'zod';
import { SerializedAgentError } from './errors/agent-error.js';
import { RunId, SessionId } from './identifiers.js';
import { InputPart } from './input.js';
import {
  CancelReason,
  InteractionAnswer,
  InteractionOutcome,
  InteractionRef,
  InteractionRequest,
} from './interactions.js';
import { PermissionMode } from './permission-mode.js';
import { ContextUsage, PlanLimits } from './plan-limits.js';
import { InputCancelReason, InputDelivery, InputHoldReason, InputId } from './queued-inputs.js';
import { TokenUsage } from './usage.js';
import { ChangedFile, Workspace, WorkspaceStatus } from './workspace.js';

const envelope = {
  sessionId: SessionId,
  /** Per-session position, starting at 1, with no gaps. */
  seq: z.number().int().positive(),
  /** ISO-8601 time the event was recorded. */
  at: z.string().max(40),
};

function sessionEvent<Type extends string, Shape extends z.ZodRawShape>(type: Type, shape: Shape) {
  return z.strictObject({ type: z.literal(type), ...envelope, ...shape });
}

function runEvent<Type extends string, Shape extends z.ZodRawShape>(type: Type, shape: Shape) {
  return z.strictObject({ type: z.literal(type), ...envelope, runId: RunId, ...shape });
}

/** The longest text one delta event carries: a longer text is split over several, and deltas coalesced up to it. */
export const deltaTextLimit = 100_000;
/** The longest block or tool-use id an event carries. */
export const eventIdLengthLimit = 300;

const BlockId = z.string().min(1).max(eventIdLengthLimit);
const ToolUseId = z.string().min(1).max(eventIdLengthLimit);
/** Set when the frame came from a subagent: the tool call that started it. Absent for the main answer. */
const parentToolUseId = ToolUseId.optional();

export const SessionOpenedEvent = sessionEvent('session.opened', {
  provider: z.string().max(50),
  workspace: Workspace,
  /** The session's settings as recorded: environment values and system-prompt text are left out. */
  configuration: z.record(z.string(), z.unknown()),
  ephemeral: z.boolean(),
  /** True when a closed session was reopened with continueSession. */
  reopened: z.boolean(),
  /** Set on a fork's first event: the session (and run, when one was named) its conversation was copied from. */
  forkedFrom: z.strictObject({ sessionId: SessionId, runId: RunId.nullable() }).optional(),
});

/** The session's workspace was prepared (a worktree created, or a directory checked): the agent runs in workspace.directory. */
export const SessionWorkspaceReadyEvent = sessionEvent('session.workspace_ready', {
  workspace: WorkspaceStatus,
});

/** The session closed (or is being deleted) and its workspace was released: removed, or kept and why. */
export const SessionWorkspaceReleasedEvent = sessionEvent('session.workspace_released', {
  workspace: WorkspaceStatus,
});

/** A fork was made of this session (the fork's own session.opened names this one). */
export const SessionForkedEvent = sessionEvent('session.forked', {
  forkSessionId: SessionId,
  /** The run the fork's conversation ends with; null: all of it. */
  atRunId: RunId.nullable(),
});

/**
 * The conversation went back to just before `toRunId`: that run and every later one are no longer
 * in the agent's context (their events stay in the log). `files`: what was put back on disk, or
 * null when files were not asked for.
 */
export const SessionRewoundEvent = sessionEvent('session.rewound', {
  toRunId: RunId,
  files: z
    .strictObject({
      paths: z.array(z.string().max(4096)).max(10_000),
      insertions: z.number().int().nonnegative(),
      deletions: z.number().int().nonnegative(),
    })
    .nullable(),
});

export const SessionClosedEvent = sessionEvent('session.closed', {
  reason: z.enum(['requested']),
});

/** The provider's own conversation id changed (first seen, or changed by the provider, e.g. /clear). */
export const SessionProviderSessionChangedEvent = sessionEvent('session.provider_session_changed', {
  providerSessionId: z.string().min(1).max(300),
});

/** The permission mode in effect changed (or was first reported). */
export const SessionModeChangedEvent = sessionEvent('session.mode_changed', {
  mode: PermissionMode,
  /** What reported it: the agent at the start of a turn, its status line, or a host command. */
  source: z.enum(['provider', 'command']),
});

export const RunStartedEvent = runEvent('run.started', {
  /** The turn's input; null when the host asked for it to be redacted. */
  input: z.array(InputPart).nullable(),
  inputRedacted: z.boolean(),
  /** Set when the run is a control (a slash command), not a turn. */
  control: z.strictObject({ name: z.string().max(50) }).optional(),
  /**
   * Set when the agent began this turn by itself, not for a host's input (`input` is then empty): the
   * claude CLI does when a background task it ran finishes, and answers the task's report.
   */
  startedBy: z.literal('agent').optional(),
});

/** The model in effect changed (or was first reported). */
export const SessionModelChangedEvent = sessionEvent('session.model_changed', {
  model: z.string().max(200),
  source: z.enum(['provider', 'command']),
});

/** The agent process of the session started (facts a restarted runtime uses to clean up after a crash). */
export const SessionProcessStartedEvent = sessionEvent('session.process_started', {
  pid: z.number().int().positive(),
  /** The process's start time as the OS reports it (Linux: clock ticks since boot); null where unknown. */
  startTime: z.number().int().nonnegative().nullable(),
  /** A random value in the process's environment, inherited by everything it starts. */
  marker: z.string().max(100),
});

export const SessionProcessStoppedEvent = sessionEvent('session.process_stopped', {
  /** closed: the session closed; released: the runtime let it go (shutdown, idle); exited: it ended by itself; crashed: signal or error exit; restarted: a new runtime found it left over. */
  reason: z.enum(['closed', 'released', 'idle', 'exited', 'crashed', 'restarted']),
});

/** A control run finished: its output text and status. Followed by run.completed. */
export const ControlCompletedEvent = runEvent('control.completed', {
  name: z.string().max(50),
  status: z.enum(['succeeded', 'failed', 'unsupported']),
  output: z.string().max(100_000),
});

/** The conversation's context was cleared (the provider continues under a new conversation id). */
export const ContextClearedEvent = runEvent('context.cleared', {});

/** The most tokens a context.compacted reports (a context window is at most a few million). */
export const contextTokensLimit = 1e9;
const ContextTokens = z.number().int().nonnegative().max(contextTokensLimit);

/**
 * The conversation's context was replaced by a summary of it: asked for (the `compact` control), or
 * done by the agent on its own as the context was filling up, before the run's next model call.
 */
export const ContextCompactedEvent = runEvent('context.compacted', {
  trigger: z.enum(['requested', 'automatic']),
  /** The context's size before; null when the agent did not say. */
  tokensBefore: ContextTokens.nullable(),
  /** Its size after; null when the agent did not say. */
  tokensAfter: ContextTokens.nullable(),
});

/** The run waits for a free agent process (the provider's process limit is reached). */
export const RunQueuedEvent = runEvent('run.queued', {
  /** How many runs wait before this one (0 = next). */
  position: z.number().int().nonnegative(),
});

/**
 * Where the agent's conversation stands after the run, in the agent's own ids: what fork_session and
 * rewind_session cut at. Sent by the provider before run.completed, when it knows them.
 */
export const RunCheckpointedEvent = runEvent('run.checkpointed', {
  /** The agent's conversation the run was part of. */
  providerSessionId: z.string().min(1).max(300),
  /**
   * The agent's id of the run's input message (file checkpoints are kept under it); null when the
   * run took no input of the host's: a turn the agent began by itself, or one that started a new,
   * empty conversation (Claude's /clear; lastMessageId is null too).
   */
  inputMessageId: z.string().min(1).max(300).nullable(),
  /**
   * The agent's id of the run's last message; null when it answered nothing (the run cannot be cut
   * after it but at its input), or, with inputMessageId null, when the conversation starts anew
   * after the run (a copy cut there holds nothing).
   */
  lastMessageId: z.string().min(1).max(300).nullable(),
});

/** A checkpoint after which the conversation starts anew, empty (both ids null: Claude's /clear): a copy cut there holds nothing. */
export function checkpointStartsAnew(checkpoint: {
  readonly inputMessageId: string | null;
  readonly lastMessageId: string | null;
}): boolean {
  return checkpoint.inputMessageId === null && checkpoint.lastMessageId === null;
}

/**
 * After a run ended: the files of the workspace it changed, against their state when it started
 * (from git; only for workspaces that can tell, e.g. git worktrees).
 */
export const RunFilesChangedEvent = runEvent('run.files_changed', {
  files: z.array(ChangedFile).max(10_000),
  /** More files changed than are listed. */
  truncated: z.boolean(),
});

/** A host asked to stop the run; it ends with run.completed (normally interrupted). */
export const RunInterruptRequestedEvent = runEvent('run.interrupt_requested', {});

export const RunMessageDeltaEvent = runEvent('run.message_delta', {
  /** The content block the text belongs to: text before and after a tool call has different ids. */
  blockId: BlockId,
  text: z.string().max(deltaTextLimit),
  parentToolUseId,
});

export const RunThinkingDeltaEvent = runEvent('run.thinking_delta', {
  blockId: BlockId,
  text: z.string().max(deltaTextLimit),
  parentToolUseId,
});

export const RunRetryingEvent = runEvent('run.retrying', {
  attempt: z.number().int().nonnegative(),
  maxAttempts: z.number().int().nonnegative(),
  delayMs: z.number().nonnegative(),
  /** The HTTP status of the failed call; null for connection errors. */
  httpStatus: z.number().int().nullable(),
  /**
   * Blocks (run.message_delta / run.thinking_delta blockIds) the failed attempt had begun to stream:
   * the call is made again from the start, so their text is not part of the answer. A host drops
   * them, or marks them cut off where it cannot take text back. Absent when nothing had streamed.
   */
  abandonedBlockIds: z.array(BlockId).min(1).max(1000).optional(),
});

export const RunToolActivityEvent = runEvent('run.tool_activity', {
  status: z.enum(['invoked', 'succeeded', 'failed']),
  toolName: z.string().min(1).max(300),
  toolUseId: ToolUseId,
  parentToolUseId,
  /**
   * invoked: the tool's input as the agent gave it (e.g. a file path, an edit's old and new text, a
   * todo list), when its JSON fits toolActivityLimits.inputBytes; otherwise absent and inputOmitted.
   */
  input: z.record(z.string(), z.unknown()).optional(),
  inputOmitted: z.literal(true).optional(),
  /** succeeded / failed: the tool result's text, cut at toolActivityLimits.outputCharacters (outputTruncated then). */
  output: z.string().max(20_000).optional(),
  outputTruncated: z.literal(true).optional(),
});

/** Bounds on what run.tool_activity carries of a tool's input and result. */
export const toolActivityLimits = { inputBytes: 64 * 1024, outputCharacters: 20_000 } as const;

export const RunUsageEvent = runEvent('run.usage', TokenUsage.shape);

export const RunOutcome = z.enum(['succeeded', 'failed', 'interrupted']);
export type RunOutcome = z.infer<typeof RunOutcome>;

/** Why the model stopped, when the agent says: the Messages API's stop reasons (anything else is "other"). */
export const StopReason = z.enum([
  'end_turn',
  'max_tokens',
  'stop_sequence',
  'tool_use',
  'pause_turn',
  'refusal',
  'other',
]);
export type StopReason = z.infer<typeof StopReason>;

export const RunCompletedEvent = runEvent('run.completed', {
  outcome: RunOutcome,
  /** Present when the outcome is failed (and when an interrupt had a reason). */
  error: SerializedAgentError.optional(),
  /** The model's last stop reason in the run, when the agent reports it (e.g. max_tokens, refusal). */
  stopReason: StopReason.optional(),
  /**
   * Blocks the run's last model call had begun to stream that are not part of its answer: the call
   * broke off and no retry followed (every retry failed), so the agent keeps none of their text. A
   * host drops them, or marks them cut off, as for run.retrying's.
   */
  abandonedBlockIds: z.array(BlockId).min(1).max(1000).optional(),
});

/** The agent asks the host: an approval of a tool call, or a set of questions. */
export const InteractionRequestedEvent = runEvent('interaction.requested', {
  interactionRef: InteractionRef,
  request: InteractionRequest,
});

/** The host's answer reached the agent; the interaction is over. */
export const InteractionSettledEvent = runEvent('interaction.settled', {
  interactionRef: InteractionRef,
  outcome: InteractionOutcome,
  /** The answer as given; null when redacted (sensitive questions). */
  answer: InteractionAnswer.nullable(),
  /** host: answered by a host; policy: denied by the runtime's policy (e.g. a timeout). */
  by: z.enum(['host', 'policy']),
});

/** The agent withdrew its own prompt (e.g. on interrupt); a late answer is refused. */
export const InteractionWithdrawnEvent = runEvent('interaction.withdrawn', {
  interactionRef: InteractionRef,
});

/** The run ended (or the session closed) while the interaction was open. */
export const InteractionCancelledEvent = runEvent('interaction.cancelled', {
  interactionRef: InteractionRef,
  reason: CancelReason,
});

/** The host answered, but the answer could not be delivered to the agent. */
export const InteractionSendFailedEvent = runEvent('interaction.send_failed', {
  interactionRef: InteractionRef,
});

/**
 * A turn submitted while a run was active was queued (after_turn) or sent into the running run
 * (steer). `runId` is the run it will start as (after_turn) or the running run (steer). Exactly one
 * of input.started, input.folded or input.cancelled ends it.
 */
export const InputQueuedEvent = sessionEvent('input.queued', {
  inputId: InputId,
  delivery: InputDelivery,
  runId: RunId,
  /** The input as run.started records it; null when redacted. */
  input: z.array(InputPart).nullable(),
  inputRedacted: z.boolean(),
});

/** A queued after_turn input started as its own run (its run.started follows). */
export const InputStartedEvent = runEvent('input.started', {
  inputId: InputId,
});

/** A steered input reached the agent inside the running run `runId`. */
export const InputFoldedEvent = runEvent('input.folded', {
  inputId: InputId,
});

/** A queued input ended without running (InputCancelReason); `runId` as on its input.queued. */
export const InputCancelledEvent = sessionEvent('input.cancelled', {
  inputId: InputId,
  runId: RunId,
  reason: InputCancelReason,
  /** Set with agent_refused (what the agent said, as an error) and input_invalid (the part refused, as submit_turn would refuse it). */
  error: SerializedAgentError.optional(),
});

/**
 * A queued after_turn input does not start although no run is active (InputHoldReason): it starts at
 * `until` (ISO-8601) or sooner when what holds it ends; withdrawing or closing still cancels it.
 */
export const InputHeldEvent = sessionEvent('input.held', {
  inputId: InputId,
  runId: RunId,
  until: z.string().max(40),
  reason: InputHoldReason,
});

/** The account's plan limits as the agent last reported them (see PlanLimits). */
export const SessionLimitsChangedEvent = sessionEvent('session.limits_changed', {
  limits: PlanLimits,
});

/** How full the agent's context window is, measured after a run. */
export const SessionContextMeasuredEvent = sessionEvent('session.context_measured', {
  runId: RunId.optional(),
  contextUsage: ContextUsage,
});

export const DiagnosticLevel = z.enum(['debug', 'info', 'warning', 'error']);
export type DiagnosticLevel = z.infer<typeof DiagnosticLevel>;

/** A bounded machine-readable note. Never raw provider prose, prompts or secrets. */
export const DiagnosticEvent = sessionEvent('diagnostic', {
  runId: RunId.optional(),
  level: DiagnosticLevel,
  code: z.string().regex(/^[a-z0-9_.]{1,80}$/),
});

export const ProtocolEvent = z.discriminatedUnion('type', [
  SessionOpenedEvent,
  SessionClosedEvent,
  SessionForkedEvent,
  SessionRewoundEvent,
  SessionWorkspaceReadyEvent,
  SessionWorkspaceReleasedEvent,
  SessionProviderSessionChangedEvent,
  SessionModeChangedEvent,
  SessionModelChangedEvent,
  SessionProcessStartedEvent,
  SessionProcessStoppedEvent,
  RunStartedEvent,
  RunQueuedEvent,
  InputQueuedEvent,
  InputStartedEvent,
  InputFoldedEvent,
  InputCancelledEvent,
  InputHeldEvent,
  SessionLimitsChangedEvent,
  SessionContextMeasuredEvent,
  RunCheckpointedEvent,
  RunFilesChangedEvent,
  RunInterruptRequestedEvent,
  RunMessageDeltaEvent,
  RunThinkingDeltaEvent,
  RunRetryingEvent,
  RunToolActivityEvent,
  RunUsageEvent,
  RunCompletedEvent,
  InteractionRequestedEvent,
  InteractionSettledEvent,
  InteractionWithdrawnEvent,
  InteractionCancelledEvent,
  InteractionSendFailedEvent,
  ControlCompletedEvent,
  ContextClearedEvent,
  ContextCompactedEvent,
  DiagnosticEvent,
]);
export type ProtocolEvent = z.infer<typeof ProtocolEvent>;
export type ProtocolEventType = ProtocolEvent['type'];
export type EventOfType<Type extends ProtocolEventType> = Extract<ProtocolEvent, { type: Type }>;

type DistributiveOmit<T, Key extends PropertyKey> = T extends unknown ? Omit<T, Key> : never;

/** An event before the log gives it its envelope (sessionId, seq, at). */
export type EventBody = DistributiveOmit<ProtocolEvent, 'sessionId' | 'seq' | 'at'>;
export type EventBodyOfType<Type extends ProtocolEventType> = Extract<EventBody, { type: Type }>;

export const protocolEventTypes = ProtocolEvent.options.map((option) => option.shape.type.value) as ProtocolEventType[];

/** Events that end a run. */
export function isRunTerminal(event: ProtocolEvent | EventBody): event is EventOfType<'run.completed'> {
  return event.type === 'run.completed';
}

const bodySchemas = new Map<string, z.ZodType<EventBody>>();

/**
 * The schema of an event's body (the event without the envelope the log gives it), for checking a
 * body before it is stored; undefined for a type the protocol does not have. Built on first use of
 * each type: all of them at once cost a session's first turn a few ms before its first delta.
 */
export function eventBodySchema(type: string): z.ZodType<EventBody> | undefined {
  let schema = bodySchemas.get(type);
  if (schema) return schema;
  const option = ProtocolEvent.options.find((candidate) => candidate.shape.type.value === type);
  if (!option) return undefined;
  schema = (option as unknown as z.ZodObject).omit({
    sessionId: true,
    seq: true,
    at: true,
  }) as unknown as z.ZodType<EventBody>;
  bodySchemas.set(type, schema);
  return schema;
}
