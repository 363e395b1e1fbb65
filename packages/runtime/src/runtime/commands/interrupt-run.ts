import { type InterruptRunCommand, type InterruptRunReceipt, toAgentError } from '@tether/protocol';
import { decideInterrupt } from '../../state/session-machine.js';
import { type CommandContext, accepted, requireCapability } from './command-context.js';

/** Asks the agent to stop the active run; the run ends (interrupted) with the agent's answer, not here. */
export async function interruptRun(
  context: CommandContext,
  command: InterruptRunCommand,
  fingerprint: string,
): Promise<InterruptRunReceipt> {
  const found = context.entries.get(command.sessionId);
  const { entry, decision } = accepted(found, decideInterrupt(found?.record, command));
  requireCapability(entry.provider, (can) => can.interrupt, 'interrupt a run', 'interrupt');
  const { runId } = decision;
  const receipt: InterruptRunReceipt = {
    type: 'interrupt_run',
    commandId: command.commandId,
    sessionId: command.sessionId,
    runId,
  };
  if (runId === null) {
    // Nothing is running: a no-op receipt, and nobody waits for a result that will not come.
    await context.write(entry, [], receipt, fingerprint);
    return receipt;
  }
  // The intent is durable before the round-trip, so a result that lands first still ends the run as a stop.
  if (!entry.interruptRequested.has(runId)) {
    entry.interruptRequested.add(runId);
    context.log.stage(entry, [{ type: 'run.interrupt_requested', runId }]);
    await context.writer.flush();
  }
  const session = await context.providerSession(entry);
  try {
    await session.doInterrupt({ runId });
  } catch (error) {
    entry.interruptRequested.delete(runId);
    throw toAgentError(error);
  }
  await context.write(entry, [], receipt, fingerprint);
  return receipt;
}
