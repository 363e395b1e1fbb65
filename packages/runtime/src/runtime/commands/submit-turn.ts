import { type SubmitTurnCommand, type SubmitTurnReceipt, newRunId } from '@tether/protocol';
import { decideSubmitTurn } from '../../state/session-machine.js';
import { type CommandContext, accepted } from './command-context.js';

/** Records the run, then hands the turn to the agent in the background (the receipt does not wait for it). */
export async function submitTurn(
  context: CommandContext,
  command: SubmitTurnCommand,
  fingerprint: string,
): Promise<SubmitTurnReceipt> {
  const found = context.entries.get(command.sessionId);
  const { entry, decision } = accepted(found, decideSubmitTurn(found?.record, command, { newRunId }));
  const { runId } = decision;
  const receipt: SubmitTurnReceipt = {
    type: 'submit_turn',
    commandId: command.commandId,
    sessionId: command.sessionId,
    runId,
  };
  await context.write(entry, decision.events, receipt, fingerprint);
  const input = command.input.map((part) => ({ type: 'text' as const, text: String(part.text) }));
  context.startRun(entry, runId, (session) => session.doTurn({ runId, input }));
  return receipt;
}
