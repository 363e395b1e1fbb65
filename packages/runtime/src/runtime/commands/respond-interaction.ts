import { AgentError, type RespondInteractionCommand, type RespondInteractionReceipt } from '@tether/protocol';
import { decideRespond } from '../../state/interaction-machine.js';
import { type CommandContext, accepted } from './command-context.js';
import { deliverAnswer } from './deliver-answer.js';
import type { CommandFingerprint } from '../command-fingerprint.js';

/** Hands the host's answer to the agent; the first answer wins, and the receipt says whether it arrived. */
export async function respondInteraction(
  context: CommandContext,
  command: RespondInteractionCommand,
  fingerprint: CommandFingerprint,
): Promise<RespondInteractionReceipt> {
  const found = context.entries.get(command.sessionId);
  if (found) await found.loadInteractions(context.store);
  const { entry, decision } = accepted(
    found,
    decideRespond(found?.record, found?.interactions.get(command.interactionRef), command),
  );
  const body = await deliverAnswer(context, entry, decision.resolving, command.answer, 'host');
  if (!body) {
    const status = entry.interactions.get(command.interactionRef)?.status;
    throw new AgentError({
      code: 'interaction_already_settled',
      message: `The interaction was ${status} before the answer reached the agent (its run ended or the agent withdrew it).`,
      details: { reason: status ?? 'unknown' },
    });
  }
  const status = body.type === 'interaction.settled' ? 'settled' : 'send_failed';
  const receipt: RespondInteractionReceipt = {
    type: 'respond_interaction',
    commandId: command.commandId,
    sessionId: command.sessionId,
    interactionRef: command.interactionRef,
    status,
  };
  await context.write(entry, [body], receipt, fingerprint);
  return receipt;
}
