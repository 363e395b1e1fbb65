import type { Command, CommandType, Receipt } from '@tether/protocol';
import type { CommandContext } from './command-context.js';
import { cancelQueuedInput } from './cancel-queued-input.js';
import { closeSession } from './close-session.js';
import { forkSession } from './fork-session.js';
import { getContextUsage } from './get-context-usage.js';
import { getSessionCost } from './get-session-cost.js';
import { interruptRun } from './interrupt-run.js';
import { openSession } from './open-session.js';
import { respondInteraction } from './respond-interaction.js';
import { rewindSession } from './rewind-session.js';
import { runControl } from './run-control.js';
import { setModel } from './set-model.js';
import { setPermissionMode } from './set-permission-mode.js';
import { submitTurn } from './submit-turn.js';
import type { CommandFingerprint } from '../command-fingerprint.js';

type CommandHandler<Type extends CommandType> = (
  context: CommandContext,
  command: Extract<Command, { type: Type }>,
  fingerprint: CommandFingerprint,
) => Promise<Extract<Receipt, { type: Type }>>;

/** Every command type's handler: a command without one does not compile. */
const commandHandlers: { readonly [Type in CommandType]: CommandHandler<Type> } = {
  open_session: openSession,
  submit_turn: submitTurn,
  interrupt_run: interruptRun,
  cancel_queued_input: cancelQueuedInput,
  close_session: closeSession,
  respond_interaction: respondInteraction,
  set_permission_mode: setPermissionMode,
  run_control: runControl,
  set_model: setModel,
  get_context_usage: getContextUsage,
  get_session_cost: getSessionCost,
  fork_session: forkSession,
  rewind_session: rewindSession,
};

/** Runs a validated command with its session pinned in memory (the caller's part), and answers with its receipt. */
export function runCommand(
  context: CommandContext,
  command: Command,
  fingerprint: CommandFingerprint,
): Promise<Receipt> {
  // The table pairs each type with its handler; TypeScript cannot follow that pairing through the union.
  const handler = commandHandlers[command.type] as CommandHandler<CommandType>;
  return handler(context, command, fingerprint);
}
