import { type SubmitTurnCommand, type SubmitTurnReceipt, agentDirectory, newRunId } from '@tether/protocol';
import { decideSubmitTurn, refuseNewRun } from '../../state/session-machine.js';
import { requireInputCapabilities, resolveTurnInput } from '../turn-input/resolve-turn-input.js';
import { type CommandContext, accepted } from './command-context.js';

/**
 * Reads and checks the turn's input, records the run (with the images' bytes, unless redacted, in
 * the same transaction), then hands the turn to the agent in the background (the receipt does not wait for it).
 */
export async function submitTurn(
  context: CommandContext,
  command: SubmitTurnCommand,
  fingerprint: string,
): Promise<SubmitTurnReceipt> {
  const before = context.entries.get(command.sessionId);
  // A session that cannot take the turn says so before any file is read.
  const blocked = refuseNewRun(before?.record);
  if (blocked) throw blocked.refusal;
  requireInputCapabilities(before?.provider ?? null, command.input);
  const input = await resolveTurnInput(
    command.input,
    agentDirectory(before!.record.workspace, before!.record.workspaceStatus),
  );
  // Decided after the input was read: another command may have started a run meanwhile.
  const found = context.entries.get(command.sessionId);
  const { entry, decision } = accepted(
    found,
    decideSubmitTurn(found?.record, command, { newRunId, input: input.recorded }),
  );
  const { runId } = decision;
  const receipt: SubmitTurnReceipt = {
    type: 'submit_turn',
    commandId: command.commandId,
    sessionId: command.sessionId,
    runId,
  };
  const blobs = decision.inputRecorded ? input.images.map((image) => ({ ...image, sessionId: command.sessionId })) : [];
  await context.write(entry, decision.events, receipt, fingerprint, blobs);
  context.startRun(entry, runId, (session) => session.doTurn({ runId, input: input.provider }));
  return receipt;
}
