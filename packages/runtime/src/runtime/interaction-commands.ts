import {
  AgentError,
  type EventBody,
  type InteractionAnswer,
  type Receipt,
  type RespondInteractionCommand,
  type SetPermissionModeCommand,
} from '@tether/protocol';
import { decideRespond, outcomeOf, recordableAnswer } from '../state/interaction-machine.js';
import type { InteractionRecord } from '../store/tether-store.js';
import { timeoutDecline, timeoutDenial } from './provider-output.js';
import type { ControlContext } from './session-controls.js';
import type { SessionEntry } from './session-entry.js';

/** What answering and mode changes need from the runtime, beyond the control commands' context. */
export interface InteractionContext extends ControlContext {
  stage(entry: SessionEntry, bodies: readonly EventBody[]): void;
  loadInteractions(entry: SessionEntry): Promise<void>;
  isStopped(): boolean;
}

/**
 * Marks the interaction resolving (any other answer now finds it taken), hands the answer to the
 * provider, and says what happened: settled, send_failed, or nothing when the interaction was
 * withdrawn or cancelled meanwhile (only a delivered answer becomes terminal).
 */
async function deliver(context: InteractionContext, entry: SessionEntry, interaction: InteractionRecord, answer: InteractionAnswer, by: 'host' | 'policy'): Promise<EventBody | null> {
  entry.interactions.set(interaction.interactionRef, { ...interaction, status: 'resolving' });
  entry.clearTimer(interaction.interactionRef);
  let delivered = true;
  try {
    await (await context.providerSession(entry)).doRespond({ interactionRef: interaction.interactionRef, answer });
  } catch {
    delivered = false;
  }
  if (entry.interactions.get(interaction.interactionRef)?.status !== 'resolving') return null;
  const base = { runId: interaction.runId, interactionRef: interaction.interactionRef };
  return delivered
    ? { type: 'interaction.settled', ...base, outcome: outcomeOf(answer), answer: by === 'host' ? recordableAnswer(interaction, answer) : answer, by }
    : { type: 'interaction.send_failed', ...base };
}

export async function respondInteraction(context: InteractionContext, command: RespondInteractionCommand, fingerprint: string): Promise<Receipt> {
  const entry = context.entry(command.sessionId);
  if (entry) await context.loadInteractions(entry);
  const interaction = entry?.interactions.get(command.interactionRef);
  decideRespond(entry?.record, interaction, command);
  const body = await deliver(context, entry!, interaction!, command.answer, 'host');
  if (!body) {
    const status = entry!.interactions.get(command.interactionRef)?.status;
    throw new AgentError({
      code: 'interaction_already_settled',
      message: `The interaction was ${status} before the answer reached the agent (its run ended or the agent withdrew it).`,
      details: { reason: status ?? 'unknown' },
    });
  }
  const status = body.type === 'interaction.settled' ? 'settled' : 'send_failed';
  const receipt: Receipt = { type: 'respond_interaction', commandId: command.commandId, sessionId: command.sessionId, interactionRef: command.interactionRef, status };
  await context.write(entry!, [body], receipt, fingerprint);
  return receipt;
}

/** A prompt nobody answered in time is denied, never allowed. */
export async function denyOnTimeout(context: InteractionContext, entry: SessionEntry, interactionRef: string): Promise<void> {
  const interaction = entry.interactions.get(interactionRef);
  if (!interaction || interaction.status !== 'pending' || context.isStopped()) return;
  const body = await deliver(context, entry, interaction, interaction.request.kind === 'approval' ? timeoutDenial : timeoutDecline, 'policy');
  if (body) context.stage(entry, [body]);
}

export async function setPermissionMode(context: InteractionContext, command: SetPermissionModeCommand, fingerprint: string): Promise<Receipt> {
  const entry = context.entry(command.sessionId);
  if (!entry) throw new AgentError({ code: 'session_not_found', message: 'No session has that id. Check the id, or open a new session with open_session.' });
  if (entry.record.state === 'closed') {
    throw new AgentError({ code: 'session_closed', message: 'The session is closed. Reopen it with open_session and continueSession, then change the mode.' });
  }
  if (entry.provider && !entry.provider.capabilities.setMode) {
    throw new AgentError({ code: 'capability_unsupported', message: `The ${entry.provider.name} provider cannot change the permission mode of a running session.`, details: { reason: 'set_mode' } });
  }
  const session = await context.providerSession(entry);
  if (session.requiresRestartFor(command.mode)) {
    throw new AgentError({
      code: 'requires_restart',
      message: `The running agent cannot enter ${command.mode} mode without a restart. Close and reopen the session with that mode, or choose another.`,
      details: { reason: command.mode },
    });
  }
  const mode = await session.doSetPermissionMode(command.mode);
  const changed = mode !== entry.record.permissionMode || entry.record.configuration.permissionMode !== mode;
  const receipt: Receipt = { type: 'set_permission_mode', commandId: command.commandId, sessionId: command.sessionId, mode };
  await context.write(entry, changed ? [{ type: 'session.mode_changed', mode, source: 'command' }] : [], receipt, fingerprint);
  return receipt;
}
