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

export const Command = z.discriminatedUnion('type', [
  OpenSessionCommand,
  SubmitTurnCommand,
  InterruptRunCommand,
  CloseSessionCommand,
  RespondInteractionCommand,
  SetPermissionModeCommand,
]);
export type Command = z.infer<typeof Command>;
export type CommandType = Command['type'];

export const commandTypes = ['open_session', 'submit_turn', 'interrupt_run', 'close_session', 'respond_interaction', 'set_permission_mode'] as const satisfies readonly CommandType[];

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

export const Receipt = z.discriminatedUnion('type', [
  OpenSessionReceipt,
  SubmitTurnReceipt,
  InterruptRunReceipt,
  CloseSessionReceipt,
  RespondInteractionReceipt,
  SetPermissionModeReceipt,
]);
export type Receipt = z.infer<typeof Receipt>;

/** The receipt type that answers a given command type. */
export type ReceiptFor<C extends Command> = Extract<Receipt, { type: C['type'] }>;
