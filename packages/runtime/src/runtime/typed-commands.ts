import {
  type CloseSessionCommand,
  type InterruptRunCommand,
  type OpenSessionCommand,
  type RespondInteractionCommand,
  type SetPermissionModeCommand,
  type SubmitTurnCommand,
  newCommandId,
} from '@tether/protocol';
import type { CommandInput } from './runtime-types.js';

/** The typed command methods: each is dispatch with its type filled in and a commandId generated if none was given. */
export abstract class TypedCommands {
  abstract dispatch(raw: unknown): Promise<never>;

  openSession(input: CommandInput<OpenSessionCommand>) {
    return this.dispatch({ ...input, type: 'open_session', commandId: input.commandId ?? newCommandId() });
  }

  submitTurn(input: CommandInput<SubmitTurnCommand>) {
    return this.dispatch({ ...input, type: 'submit_turn', commandId: input.commandId ?? newCommandId() });
  }

  interruptRun(input: CommandInput<InterruptRunCommand>) {
    return this.dispatch({ ...input, type: 'interrupt_run', commandId: input.commandId ?? newCommandId() });
  }

  closeSession(input: CommandInput<CloseSessionCommand>) {
    return this.dispatch({ ...input, type: 'close_session', commandId: input.commandId ?? newCommandId() });
  }

  respondInteraction(input: CommandInput<RespondInteractionCommand>) {
    return this.dispatch({ ...input, type: 'respond_interaction', commandId: input.commandId ?? newCommandId() });
  }

  setPermissionMode(input: CommandInput<SetPermissionModeCommand>) {
    return this.dispatch({ ...input, type: 'set_permission_mode', commandId: input.commandId ?? newCommandId() });
  }
}
