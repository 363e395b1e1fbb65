import { z } from 'zod';
import { CommandId, RunId, SessionId } from './identifiers.js';
import { AnyInputPart } from './input.js';
import { InteractionAnswer, InteractionRef } from './interactions.js';
import { PermissionMode } from './permission-mode.js';
import { SessionConfiguration, sessionConfigurationKeys } from './session-configuration.js';
import { Workspace } from './workspace.js';

export const ProviderName = z.string().regex(/^[a-z][a-z0-9-]{0,49}$/, 'a provider name such as "claude"');

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
    ...SessionConfiguration.shape,
  })
  .check((context) => {
    const command = context.value;
    if (command.continueSession === undefined) {
      if (command.workspace === undefined) {
        context.issues.push({ code: 'custom', path: ['workspace'], message: 'a new session needs a workspace, e.g. {"kind":"directory","path":"/repo"}', input: undefined });
      }
      return;
    }
    const given = ['workspace', 'provider', 'ephemeral', ...sessionConfigurationKeys].filter(
      (key) => command[key as keyof typeof command] !== undefined,
    );
    for (const key of given) {
      context.issues.push({ code: 'custom', path: [key], message: 'a reopened session keeps its stored settings; leave this out with continueSession', input: undefined });
    }
  });
export type OpenSessionCommand = z.infer<typeof OpenSessionCommand>;

export const SubmitTurnCommand = z.strictObject({
  type: z.literal('submit_turn'),
  commandId: CommandId,
  sessionId: SessionId,
  /** Input parts; only `text` is supported today (others answer capability_unsupported). */
  input: z.array(AnyInputPart).min(1).max(100),
  /** Overrides the session's redactInput for this turn. */
  redactInput: z.boolean().optional(),
});
export type SubmitTurnCommand = z.infer<typeof SubmitTurnCommand>;

export const InterruptRunCommand = z.strictObject({
  type: z.literal('interrupt_run'),
  commandId: CommandId,
  sessionId: SessionId,
  runId: RunId.optional(),
});
export type InterruptRunCommand = z.infer<typeof InterruptRunCommand>;

export const CloseSessionCommand = z.strictObject({
  type: z.literal('close_session'),
  commandId: CommandId,
  sessionId: SessionId,
});
export type CloseSessionCommand = z.infer<typeof CloseSessionCommand>;

export const RespondInteractionCommand = z.strictObject({
  type: z.literal('respond_interaction'),
  commandId: CommandId,
  sessionId: SessionId,
  interactionRef: InteractionRef,
  answer: InteractionAnswer,
});
export type RespondInteractionCommand = z.infer<typeof RespondInteractionCommand>;

export const SetPermissionModeCommand = z.strictObject({
  type: z.literal('set_permission_mode'),
  commandId: CommandId,
  sessionId: SessionId,
  mode: PermissionMode,
});
export type SetPermissionModeCommand = z.infer<typeof SetPermissionModeCommand>;

/** Controls Tether knows how to run (the Claude CLI's slash commands, by neutral name). */
export const ControlName = z.enum(['compact', 'clear', 'cost', 'context', 'review', 'security-review', 'init', 'pr-comments', 'model']);
export type ControlName = z.infer<typeof ControlName>;

export const RunControlCommand = z.strictObject({
  type: z.literal('run_control'),
  commandId: CommandId,
  sessionId: SessionId,
  /** A control name; one Tether does not know completes at once as unsupported, never reaching the agent. */
  name: z.string().regex(/^[a-z][a-z0-9-]{0,49}$/, 'a control name such as "compact"'),
  /** compact: instructions; model: the model name or alias. */
  argument: z.string().min(1).max(10_000).optional(),
});
export type RunControlCommand = z.infer<typeof RunControlCommand>;

const modelName = z
  .string()
  .min(1)
  .max(200)
  .refine((value) => !value.startsWith('-') && !/\s/.test(value), 'a model name or alias, e.g. "sonnet"');

export const SetModelCommand = z.strictObject({
  type: z.literal('set_model'),
  commandId: CommandId,
  sessionId: SessionId,
  /** A model name or alias; "default" returns to the provider's default. */
  model: modelName,
});
export type SetModelCommand = z.infer<typeof SetModelCommand>;

export const GetContextUsageCommand = z.strictObject({
  type: z.literal('get_context_usage'),
  commandId: CommandId,
  sessionId: SessionId,
});
export type GetContextUsageCommand = z.infer<typeof GetContextUsageCommand>;

export const GetSessionCostCommand = z.strictObject({
  type: z.literal('get_session_cost'),
  commandId: CommandId,
  sessionId: SessionId,
});
export type GetSessionCostCommand = z.infer<typeof GetSessionCostCommand>;

export const Command = z.discriminatedUnion('type', [
  OpenSessionCommand,
  SubmitTurnCommand,
  InterruptRunCommand,
  CloseSessionCommand,
  RespondInteractionCommand,
  SetPermissionModeCommand,
  RunControlCommand,
  SetModelCommand,
  GetContextUsageCommand,
  GetSessionCostCommand,
]);
export type Command = z.infer<typeof Command>;
export type CommandType = Command['type'];

export const commandTypes = [
  'open_session',
  'submit_turn',
  'interrupt_run',
  'close_session',
  'respond_interaction',
  'set_permission_mode',
  'run_control',
  'set_model',
  'get_context_usage',
  'get_session_cost',
] as const satisfies readonly CommandType[];

export const OpenSessionReceipt = z.strictObject({
  type: z.literal('open_session'),
  commandId: CommandId,
  sessionId: SessionId,
});
export type OpenSessionReceipt = z.infer<typeof OpenSessionReceipt>;

export const SubmitTurnReceipt = z.strictObject({
  type: z.literal('submit_turn'),
  commandId: CommandId,
  sessionId: SessionId,
  runId: RunId,
});
export type SubmitTurnReceipt = z.infer<typeof SubmitTurnReceipt>;

export const InterruptRunReceipt = z.strictObject({
  type: z.literal('interrupt_run'),
  commandId: CommandId,
  sessionId: SessionId,
  /** The run the interrupt applied to; null when the session was idle (a no-op). */
  runId: RunId.nullable(),
});
export type InterruptRunReceipt = z.infer<typeof InterruptRunReceipt>;

export const CloseSessionReceipt = z.strictObject({
  type: z.literal('close_session'),
  commandId: CommandId,
  sessionId: SessionId,
});
export type CloseSessionReceipt = z.infer<typeof CloseSessionReceipt>;

export const RespondInteractionReceipt = z.strictObject({
  type: z.literal('respond_interaction'),
  commandId: CommandId,
  sessionId: SessionId,
  interactionRef: InteractionRef,
  /** settled: the agent received the answer; send_failed: it could not be delivered. */
  status: z.enum(['settled', 'send_failed']),
});
export type RespondInteractionReceipt = z.infer<typeof RespondInteractionReceipt>;

export const SetPermissionModeReceipt = z.strictObject({
  type: z.literal('set_permission_mode'),
  commandId: CommandId,
  sessionId: SessionId,
  /** The mode now in effect, as the agent reported it. */
  mode: PermissionMode,
});
export type SetPermissionModeReceipt = z.infer<typeof SetPermissionModeReceipt>;

export const RunControlReceipt = z.strictObject({
  type: z.literal('run_control'),
  commandId: CommandId,
  sessionId: SessionId,
  runId: RunId,
});
export type RunControlReceipt = z.infer<typeof RunControlReceipt>;

export const SetModelReceipt = z.strictObject({
  type: z.literal('set_model'),
  commandId: CommandId,
  sessionId: SessionId,
  /** The model now in effect, as the agent resolved it (an alias becomes a full name). */
  model: z.string().max(200),
});
export type SetModelReceipt = z.infer<typeof SetModelReceipt>;

export const ContextUsage = z.strictObject({
  model: z.string().max(200).nullable(),
  totalTokens: z.number().nonnegative(),
  maxTokens: z.number().nonnegative(),
  percentage: z.number().nonnegative(),
  categories: z.array(z.strictObject({ name: z.string().max(200), tokens: z.number().nonnegative() })).max(100),
});
export type ContextUsage = z.infer<typeof ContextUsage>;

export const GetContextUsageReceipt = z.strictObject({
  type: z.literal('get_context_usage'),
  commandId: CommandId,
  sessionId: SessionId,
  usage: ContextUsage,
});
export type GetContextUsageReceipt = z.infer<typeof GetContextUsageReceipt>;

export const GetSessionCostReceipt = z.strictObject({
  type: z.literal('get_session_cost'),
  commandId: CommandId,
  sessionId: SessionId,
  /** Tether's own total for the session (summed from runs), in USD. */
  costUsd: z.number().nonnegative().nullable(),
  /** The agent's own cost report, as text (bounded). */
  report: z.string().max(10_000),
});
export type GetSessionCostReceipt = z.infer<typeof GetSessionCostReceipt>;

export const Receipt = z.discriminatedUnion('type', [
  OpenSessionReceipt,
  SubmitTurnReceipt,
  InterruptRunReceipt,
  CloseSessionReceipt,
  RespondInteractionReceipt,
  SetPermissionModeReceipt,
  RunControlReceipt,
  SetModelReceipt,
  GetContextUsageReceipt,
  GetSessionCostReceipt,
]);
export type Receipt = z.infer<typeof Receipt>;

/** The receipt type that answers a given command type. */
export type ReceiptFor<C extends Command> = Extract<Receipt, { type: C['type'] }>;
