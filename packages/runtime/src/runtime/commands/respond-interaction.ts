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
  const { answer } = command;
  // A plan approved into a mode the running agent cannot enter live (bypass, for one not launched in
  // it) would be taken and the mode silently not: refused, the interaction left pending.
  if (answer.decision === 'approve' && answer.continueInMode !== undefined) {
    const session = await context.providerSession(entry);
    if (session.requiresRestartFor(answer.continueInMode))
      throw new AgentError({
        code: 'requires_restart',
        message: `The running agent cannot continue in ${answer.continueInMode} mode without a restart. Approve the plan with another mode (or none), then set_permission_mode ${answer.continueInMode} with restart: true once the run has ended.`,
        details: { reason: answer.continueInMode },
      });
  }
  const body = await deliverAnswer(context, entry, decision.resolving, answer, 'host');
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
