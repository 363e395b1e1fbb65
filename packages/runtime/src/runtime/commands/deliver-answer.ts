import type { EventBody, InteractionAnswer } from '@tether/protocol';
import { outcomeOf, recordableAnswer, startResolving } from '../../state/interaction-machine.js';
import type { InteractionRecord } from '../../store/tether-store.js';
import { timeoutDecline, timeoutDenial } from '../provider-output.js';
import type { SessionEntry } from '../session-entry.js';
import type { CommandContext } from './command-context.js';

/**
 * Takes the interaction (resolving: any other answer now finds it taken), hands the answer to the
 * provider, and says what happened: settled, send_failed, or nothing when the interaction was
 * withdrawn or cancelled meanwhile (only a delivered answer becomes terminal).
 */
export async function deliverAnswer(
  context: CommandContext,
  entry: SessionEntry,
  resolving: InteractionRecord,
  answer: InteractionAnswer,
  by: 'host' | 'policy',
): Promise<EventBody | null> {
  entry.interactions.set(resolving.interactionRef, resolving);
  entry.clearTimer(resolving.interactionRef);
  let delivered = true;
  try {
    await (await context.providerSession(entry)).doRespond({ interactionRef: resolving.interactionRef, answer });
  } catch {
    delivered = false;
  }
  if (entry.interactions.get(resolving.interactionRef)?.status !== 'resolving') return null;
  const base = { runId: resolving.runId, interactionRef: resolving.interactionRef };
  return delivered
    ? {
        type: 'interaction.settled',
        ...base,
        outcome: outcomeOf(answer),
        answer: by === 'host' ? recordableAnswer(resolving, answer) : answer,
        by,
      }
    : { type: 'interaction.send_failed', ...base };
}

/** A prompt nobody answered in time is denied, never allowed. */
export async function denyOnTimeout(
  context: CommandContext,
  entry: SessionEntry,
  interactionRef: string,
): Promise<void> {
  const resolving = startResolving(entry.interactions.get(interactionRef));
  if (resolving === null || context.isStopped()) return;
  const body = await deliverAnswer(
    context,
    entry,
    resolving,
    resolving.request.kind === 'approval' ? timeoutDenial : timeoutDecline,
    'policy',
  );
  if (body) context.log.stage(entry, [body]);
}
