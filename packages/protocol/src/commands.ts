import { z } from 'zod';
import { CommandId, RunId, SessionId } from './identifiers.js';
import { AnyInputPart } from './input.js';
import { InteractionAnswer, InteractionRef } from './interactions.js';
import { PermissionMode } from './permission-mode.js';
import { ContextUsage } from './plan-limits.js';
import { InputDelivery, InputId } from './queued-inputs.js';
import {
  SessionConfiguration,
  configurationSizeIssue,
  modelName,
  sessionConfigurationKeys,
} from './session-configuration.js';
import { Workspace } from './workspace.js';

export const ProviderName = z.string().regex(/^[a-z][a-z0-9-]{0,49}$/, 'a provider name such as "claude"');

/**
 * A command addressed to one session (its type, the caller's commandId, the session and its own
 * fields), and likewise its receipt, which repeats type, commandId and session.
 */
function sessionScoped<Type extends string, Shape extends z.ZodRawShape>(type: Type, shape: Shape) {
  return z.strictObject({ type: z.literal(type), commandId: CommandId, sessionId: SessionId, ...shape });
}

export const OpenSessionCommand = z
  .strictObject({
    type: z.literal('open_session'),
    commandId: CommandId,
    /** Required for a new session; omitted when reopening with continueSession. */
    workspace: Workspace.optional(),
    provider: ProviderName.optional(),
    /** Reopen a closed (or still open) session by its id: same id, history intact. */
    continueSession: SessionId.optional(),
    /** Keep no resumable conversation on the provider side (its process end is the conversation end). */
    ephemeral: z.boolean().optional(),
    /** Store and publish `run.started` without the turn's input text. */
    redactInput: z.boolean().optional(),
    /**
     * Start the session's agent now, in the background, so its first turn does not wait for the
     * agent's start-up (an editor's new chat). Not a stored setting; no effect on a provider without
     * `doStart`. A start that fails is a `diagnostic` (`agent.start_failed`); the first turn then starts it.
     */
    startAgent: z.boolean().optional(),
    ...SessionConfiguration.shape,
  })
  .check((context) => {
    const command = context.value;
    const tooLarge = configurationSizeIssue(command);
    if (tooLarge) context.issues.push(tooLarge);
    if (command.continueSession === undefined) {
      if (command.workspace === undefined) {
        context.issues.push({
          code: 'custom',
          path: ['workspace'],
          message: 'a new session needs a workspace, e.g. {"kind":"directory","path":"/repo"}',
          input: undefined,
        });
      }
      return;
    }
    const given = ['workspace', 'provider', 'ephemeral', 'redactInput', ...sessionConfigurationKeys].filter(
      (key) => command[key as keyof typeof command] !== undefined,
    );
    for (const key of given) {
      context.issues.push({
        code: 'custom',
        path: [key],
        message: 'a reopened session keeps its stored settings; leave this out with continueSession',
        input: undefined,
      });
    }
  });
export type OpenSessionCommand = z.infer<typeof OpenSessionCommand>;

/** The most input parts one turn may carry. */
export const inputPartsLimit = 200;

export const SubmitTurnCommand = sessionScoped('submit_turn', {
  /**
   * Input parts: text, images (inline base64 or a path) and file references (SubmittedInputPart).
   * Checked part by part in parseCommand: a part type Tether does not know answers capability_unsupported.
   */
  input: z.array(AnyInputPart).min(1).max(inputPartsLimit),
  /** Overrides the session's redactInput for this turn. */
  redactInput: z.boolean().optional(),
  /**
   * What to do when a run is active: without it the turn is refused (run_active), as before;
   * after_turn queues it as the next run, steer hands it into the running turn (InputDelivery).
   * On an idle session the turn starts at once either way.
   */
  delivery: InputDelivery.optional(),
});
export type SubmitTurnCommand = z.infer<typeof SubmitTurnCommand>;

export const InterruptRunCommand = sessionScoped('interrupt_run', {
  runId: RunId.optional(),
  /**
   * Also cancel the session's queued after_turn inputs (input.cancelled, interrupted). Without it
   * they run next, in order. Steered inputs that have not reached the model are cancelled either way.
   */
  cancelQueued: z.boolean().optional(),
});
export type InterruptRunCommand = z.infer<typeof InterruptRunCommand>;

/** Withdraws a queued input before it starts (after_turn), or before the agent took it (steer). */
export const CancelQueuedInputCommand = sessionScoped('cancel_queued_input', {
  inputId: InputId,
});
export type CancelQueuedInputCommand = z.infer<typeof CancelQueuedInputCommand>;

export const CloseSessionCommand = sessionScoped('close_session', {});
export type CloseSessionCommand = z.infer<typeof CloseSessionCommand>;

export const RespondInteractionCommand = sessionScoped('respond_interaction', {
  interactionRef: InteractionRef,
  answer: InteractionAnswer,
});
export type RespondInteractionCommand = z.infer<typeof RespondInteractionCommand>;

export const SetPermissionModeCommand = sessionScoped('set_permission_mode', {
  mode: PermissionMode,
  /**
   * When the running agent cannot enter the mode live (the snapshot's modesRequiringRestart): stop
   * it (the conversation stays resumable) and apply the mode from its next launch, instead of
   * answering requires_restart. Refused with run_active while a run is active.
   */
  restart: z.boolean().optional(),
});
export type SetPermissionModeCommand = z.infer<typeof SetPermissionModeCommand>;

/** Controls Tether knows how to run (the Claude CLI's slash commands, by neutral name). */
export const ControlName = z.enum([
  'compact',
  'clear',
  'cost',
  'context',
  'review',
  'security-review',
  'init',
  'pr-comments',
  'model',
]);
export type ControlName = z.infer<typeof ControlName>;

export const RunControlCommand = sessionScoped('run_control', {
  /** A control name; one Tether does not know completes at once as unsupported, never reaching the agent. */
  name: z.string().regex(/^[a-z][a-z0-9-]{0,49}$/, 'a control name such as "compact"'),
  /** compact: instructions; model: the model name or alias. */
  argument: z.string().min(1).max(10_000).optional(),
});
export type RunControlCommand = z.infer<typeof RunControlCommand>;

export const SetModelCommand = sessionScoped('set_model', {
  /** A model name or alias; "default" returns to the provider's default. */
  model: modelName,
});
export type SetModelCommand = z.infer<typeof SetModelCommand>;

export const GetContextUsageCommand = sessionScoped('get_context_usage', {});
export type GetContextUsageCommand = z.infer<typeof GetContextUsageCommand>;

export const GetSessionCostCommand = sessionScoped('get_session_cost', {});
export type GetSessionCostCommand = z.infer<typeof GetSessionCostCommand>;

/**
 * A new session whose conversation is a copy of this one's: all of it, or up to and including the
 * turn `atRunId` (a completed run of this session). Same provider, workspace and settings; the
 * original is not changed. Without atRunId the session must have no active run.
 */
export const ForkSessionCommand = sessionScoped('fork_session', {
  atRunId: RunId.optional(),
});
export type ForkSessionCommand = z.infer<typeof ForkSessionCommand>;

/**
 * The conversation continues from just before the turn `toRunId` (it and every later turn leave the
 * agent's context; the log keeps them). With `files`, the workspace's files that the agent's edit
 * tools changed since then are put back as they were before that turn (file checkpointing must be on).
 */
export const RewindSessionCommand = sessionScoped('rewind_session', {
  toRunId: RunId,
  files: z.boolean().optional(),
});
export type RewindSessionCommand = z.infer<typeof RewindSessionCommand>;

export const Command = z.discriminatedUnion('type', [
  OpenSessionCommand,
  SubmitTurnCommand,
  InterruptRunCommand,
  CancelQueuedInputCommand,
  CloseSessionCommand,
  RespondInteractionCommand,
  SetPermissionModeCommand,
  RunControlCommand,
  SetModelCommand,
  GetContextUsageCommand,
  GetSessionCostCommand,
  ForkSessionCommand,
  RewindSessionCommand,
]);
export type Command = z.infer<typeof Command>;
export type CommandType = Command['type'];

export const OpenSessionReceipt = sessionScoped('open_session', {});
export type OpenSessionReceipt = z.infer<typeof OpenSessionReceipt>;

export const SubmitTurnReceipt = sessionScoped('submit_turn', {
  /** The run that carries the turn: started now, the run a queued after_turn input will start as, or the running run a steer went into. */
  runId: RunId,
  /** Present when the turn was queued (a delivery was given and a run was active). */
  inputId: InputId.optional(),
  /** True when the turn did not start at once but was queued (after_turn) or sent into the running run (steer). */
  queued: z.boolean().optional(),
});
export type SubmitTurnReceipt = z.infer<typeof SubmitTurnReceipt>;

export const InterruptRunReceipt = sessionScoped('interrupt_run', {
  /** The run the interrupt applied to; null when the session was idle (a no-op). */
  runId: RunId.nullable(),
});
export type InterruptRunReceipt = z.infer<typeof InterruptRunReceipt>;

export const CancelQueuedInputReceipt = sessionScoped('cancel_queued_input', {
  inputId: InputId,
});
export type CancelQueuedInputReceipt = z.infer<typeof CancelQueuedInputReceipt>;

export const CloseSessionReceipt = sessionScoped('close_session', {});
export type CloseSessionReceipt = z.infer<typeof CloseSessionReceipt>;

export const RespondInteractionReceipt = sessionScoped('respond_interaction', {
  interactionRef: InteractionRef,
  /** settled: the agent received the answer; send_failed: it could not be delivered. */
  status: z.enum(['settled', 'send_failed']),
});
export type RespondInteractionReceipt = z.infer<typeof RespondInteractionReceipt>;

export const SetPermissionModeReceipt = sessionScoped('set_permission_mode', {
  /** The mode now in effect, as the agent reported it. */
  mode: PermissionMode,
});
export type SetPermissionModeReceipt = z.infer<typeof SetPermissionModeReceipt>;

export const RunControlReceipt = sessionScoped('run_control', {
  runId: RunId,
});
export type RunControlReceipt = z.infer<typeof RunControlReceipt>;

export const SetModelReceipt = sessionScoped('set_model', {
  /** The model now in effect, as the agent resolved it (an alias becomes a full name). */
  model: z.string().max(200),
});
export type SetModelReceipt = z.infer<typeof SetModelReceipt>;

export const GetContextUsageReceipt = sessionScoped('get_context_usage', {
  usage: ContextUsage,
});
export type GetContextUsageReceipt = z.infer<typeof GetContextUsageReceipt>;

export const GetSessionCostReceipt = sessionScoped('get_session_cost', {
  /** Tether's own total for the session (summed from runs), in USD. */
  costUsd: z.number().nonnegative().nullable(),
  /** The agent's own cost report, as text (bounded). */
  report: z.string().max(10_000),
});
export type GetSessionCostReceipt = z.infer<typeof GetSessionCostReceipt>;

export const ForkSessionReceipt = sessionScoped('fork_session', {
  /** The new session (open, idle): its first turn continues the copied conversation. */
  forkSessionId: SessionId,
  atRunId: RunId.nullable(),
});
export type ForkSessionReceipt = z.infer<typeof ForkSessionReceipt>;

/** What a rewind put back on disk (the agent's own count). */
export const RestoredFiles = z.strictObject({
  /** Absolute paths of the files put back (or deleted: created after the turn). */
  paths: z.array(z.string().max(4096)).max(10_000),
  insertions: z.number().int().nonnegative(),
  deletions: z.number().int().nonnegative(),
});
export type RestoredFiles = z.infer<typeof RestoredFiles>;

export const RewindSessionReceipt = sessionScoped('rewind_session', {
  toRunId: RunId,
  /** Null when files were not asked for. */
  files: RestoredFiles.nullable(),
});
export type RewindSessionReceipt = z.infer<typeof RewindSessionReceipt>;

export const Receipt = z.discriminatedUnion('type', [
  OpenSessionReceipt,
  SubmitTurnReceipt,
  InterruptRunReceipt,
  CancelQueuedInputReceipt,
  CloseSessionReceipt,
  RespondInteractionReceipt,
  SetPermissionModeReceipt,
  RunControlReceipt,
  SetModelReceipt,
  GetContextUsageReceipt,
  GetSessionCostReceipt,
  ForkSessionReceipt,
  RewindSessionReceipt,
]);
export type Receipt = z.infer<typeof Receipt>;
