import {
  AgentError,
  type EventBody,
  type InteractionAnswer,
  type PermissionMode,
  type Receipt,
  type RespondInteractionCommand,
  type SetPermissionModeCommand,
} from '@tether/protocol';
import type { AgentProviderV1Session } from '@tether/provider-spec';
import { decideRespond, outcomeOf, recordableAnswer, startResolving } from '../state/interaction-machine.js';
import { isRefusal } from '../state/refusal.js';
import type { InteractionRecord } from '../store/tether-store.js';
import { timeoutDecline, timeoutDenial } from './provider-output.js';
import type { ControlContext } from './session-controls.js';
import type { SessionEntry } from './session-entry.js';

/** What answering and mode changes need from the runtime, beyond the control commands' context. */
export interface InteractionContext extends ControlContext {
  stage(entry: SessionEntry, bodies: readonly EventBody[]): void;
  loadInteractions(entry: SessionEntry): Promise<void>;
  isStopped(): boolean;
  /** Stops the session's agent process, keeping the conversation resumable (recorded as released). */
  releaseProcess(entry: SessionEntry): Promise<void>;
}

/**
 * Takes the interaction (resolving: any other answer now finds it taken), hands the answer to the
 * provider, and says what happened: settled, send_failed, or nothing when the interaction was
 * withdrawn or cancelled meanwhile (only a delivered answer becomes terminal).
 */
async function deliver(context: InteractionContext, entry: SessionEntry, interaction: InteractionRecord, answer: InteractionAnswer, by: 'host' | 'policy'): Promise<EventBody | null> {
  entry.interactions.set(interaction.interactionRef, interaction);
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
  const decision = decideRespond(entry?.record, interaction, command);
  if (isRefusal(decision)) throw decision.refusal;
  const body = await deliver(context, entry!, decision.resolving, command.answer, 'host');
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
  const resolving = startResolving(entry.interactions.get(interactionRef));
  if (resolving === null || context.isStopped()) return;
  const body = await deliver(context, entry, resolving, resolving.request.kind === 'approval' ? timeoutDenial : timeoutDecline, 'policy');
  if (body) context.stage(entry, [body]);
}

/**
 * Stops the agent so the mode applies from its next launch (the next turn resumes the conversation).
 * Never while a run is active: stopping the agent would end that run.
 */
async function restartAgent(context: InteractionContext, entry: SessionEntry, mode: PermissionMode): Promise<AgentProviderV1Session> {
  if (entry.record.activeRunId !== null) {
    throw new AgentError({
      code: 'run_active',
      message: `Restarting the agent in ${mode} mode would end the active run. Wait for it to end (or interrupt it), then try again.`,
      details: { reason: 'restart' },
    });
  }
  await context.releaseProcess(entry);
  const session = await context.providerSession(entry);
  if (session.requiresRestartFor(mode)) {
    throw new AgentError({
      code: 'requires_restart',
      message: `The agent cannot enter ${mode} mode even after a restart. Open a new session with permissionMode "${mode}", or choose another mode.`,
      details: { reason: mode },
    });
  }
  return session;
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
  let session = await context.providerSession(entry);
  if (session.requiresRestartFor(command.mode)) {
    if (command.restart !== true) {
      throw new AgentError({
        code: 'requires_restart',
        message: `The running agent cannot enter ${command.mode} mode without a restart. Send set_permission_mode again with restart: true to restart it in that mode (the conversation resumes), or choose another.`,
        details: { reason: command.mode },
      });
    }
    session = await restartAgent(context, entry, command.mode);
  }
  const mode = await session.doSetPermissionMode(command.mode);
  const changed = mode !== entry.record.permissionMode || entry.record.configuration.permissionMode !== mode;
  const receipt: Receipt = { type: 'set_permission_mode', commandId: command.commandId, sessionId: command.sessionId, mode };
  await context.write(entry, changed ? [{ type: 'session.mode_changed', mode, source: 'command' }] : [], receipt, fingerprint);
  return receipt;
}
