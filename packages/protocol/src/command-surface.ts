import type { Command, CommandType, Receipt } from './commands.js';
import type { ProtocolEvent } from './events.js';
import type { ModelList } from './models.js';
import type { DeletedSession, SessionDiff } from './workspace.js';
import { newCommandId } from './identifiers.js';
import type { SessionSnapshot } from './session-snapshot.js';

/**
 * Every command's method on Tether's one surface (the runtime, the client, the CLI's backend). This
 * table is the only list: `satisfies` makes a command without a row a compile error, and the
 * methods' inputs and receipts are derived from the command and receipt unions.
 */
export const commandMethodNames = {
  open_session: 'openSession',
  /** Answers as soon as the run is recorded; follow it through the session's events. */
  submit_turn: 'submitTurn',
  interrupt_run: 'interruptRun',
  /** A queued follow-up withdrawn before it starts (input_not_queued once it started, was folded in or ended). */
  cancel_queued_input: 'cancelQueuedInput',
  close_session: 'closeSession',
  /** An approval or a question set; the first answer wins. */
  respond_interaction: 'respondInteraction',
  /** Live; requires_restart when the running agent cannot enter the mode (unless `restart`). */
  set_permission_mode: 'setPermissionMode',
  run_control: 'runControl',
  set_model: 'setModel',
  get_context_usage: 'getContextUsage',
  get_session_cost: 'getSessionCost',
  /** A new session continuing a copy of the conversation (all of it, or up to a run). */
  fork_session: 'forkSession',
  /** The conversation (and, with files, the workspace) back to just before a run. */
  rewind_session: 'rewindSession',
} as const satisfies { readonly [Type in CommandType]: string };

/** Every command type, in the table's order. */
export const commandTypes = Object.keys(commandMethodNames) as readonly CommandType[];

export type CommandMethodName = (typeof commandMethodNames)[CommandType];
export type CommandOfType<Type extends CommandType> = Extract<Command, { type: Type }>;
/** The receipt type that answers a given command type. */
export type ReceiptOfType<Type extends CommandType> = Extract<Receipt, { type: Type }>;
/** The receipt type that answers a given command. */
export type ReceiptFor<C extends { readonly type: CommandType }> = ReceiptOfType<C['type']>;

/** A command as the typed methods take it: without its type, and the commandId optional (one is generated). */
export type CommandInput<C extends Command> = Omit<C, 'type' | 'commandId'> & { commandId?: string };

/**
 * One typed method per command: its input in, its receipt out. A surface whose dispatch takes
 * options of its own (the client's signal and time limit) gets them as each method's second argument.
 */
export type CommandMethods<CallOptions = never> = {
  readonly [Type in CommandType as (typeof commandMethodNames)[Type]]: (
    input: CommandInput<CommandOfType<Type>>,
    options?: CallOptions,
  ) => Promise<ReceiptOfType<Type>>;
};

export interface SubscribeOptions {
  /** Deliver events with seq greater than this (default 0: from the beginning). */
  readonly afterSeq?: number;
  /** Ends the iteration. */
  readonly signal?: AbortSignal;
}

/**
 * Tether as a host drives it, whether it runs in this process (the runtime) or in a daemon (the
 * client): every command, and a session's snapshot and events. Reads whose shapes differ between
 * the two (listing sessions: an array in the runtime, cursor pages over HTTP) stay each one's own.
 */
export interface TetherSurface extends CommandMethods {
  /** Any command; answers with its receipt (the same receipt again for a repeated commandId). */
  dispatch<C extends Command>(command: C): Promise<ReceiptFor<C>>;
  getSession(sessionId: string): Promise<SessionSnapshot>;
  /** The session's events with seq > afterSeq, stored then live: each once, in order. */
  subscribe(sessionId: string, options?: SubscribeOptions): AsyncIterable<ProtocolEvent>;
  /**
   * Deletes a closed session and everything stored about it; an open one is refused with
   * session_open. A kept workspace holding work (a worktree with uncommitted changes or commits
   * beyond its base) is refused with workspace_has_changes unless discardWorkspaceChanges; one with
   * no work is removed (a directory workspace is never touched). Answers what became of the
   * workspace: one another session shares, or whose branch moved to another checkout, stays there.
   */
  deleteSession(sessionId: string, options?: DeleteSessionOptions): Promise<DeletedSession>;
  /** The session's work against the commit its workspace started from (capability_unsupported for a plain directory). */
  getSessionDiff(sessionId: string, options?: { readonly maxBytes?: number }): Promise<SessionDiff>;
  /** The agent's models (provider_unavailable when it cannot be asked; capability_unsupported when it has no list). */
  listModels(provider?: string): Promise<ModelList>;
  /** An image a turn of the session carried (run.started records its sha256); blob_not_found otherwise. */
  readBlob(sessionId: string, sha256: string): Promise<StoredBlob>;
}

export interface DeleteSessionOptions {
  /** Remove the session's worktree and branch even though they hold uncommitted work or commits. */
  readonly discardWorkspaceChanges?: boolean;
}

/** A content-addressed blob of a session (an image a turn carried). */
export interface StoredBlob {
  readonly mediaType: string;
  readonly bytes: Uint8Array;
}

/** The command a typed method sends: its input with the type filled in and a commandId generated if none was given. */
export function commandFromInput<Type extends CommandType>(
  type: Type,
  input: CommandInput<CommandOfType<Type>>,
): CommandOfType<Type> {
  return { ...input, type, commandId: input.commandId ?? newCommandId() } as CommandOfType<Type>;
}

/**
 * The typed command methods, generated from the table over one dispatch function. The methods pass
 * their `this` on, so they also work installed on a prototype whose dispatch is a method.
 */
export function commandMethods<This, CallOptions = never>(
  dispatch: (this: This, command: Command, options?: CallOptions) => Promise<Receipt>,
): CommandMethods<CallOptions> {
  const methods: Record<string, (this: This, input: CommandInput<Command>, options?: CallOptions) => Promise<Receipt>> =
    {};
  for (const type of commandTypes) {
    methods[commandMethodNames[type]] = function (input, options) {
      return dispatch.call(this, commandFromInput(type, input as never), options);
    };
  }
  return methods as unknown as CommandMethods<CallOptions>;
}
