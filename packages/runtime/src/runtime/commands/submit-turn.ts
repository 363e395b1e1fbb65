import { checkConversationImages, conversationImages } from '../turn-input/conversation-images.js';
import {
  AgentError,
  type SubmitTurnCommand,
  type SubmitTurnReceipt,
  newInputId,
  newRunId,
  toAgentError,
} from '@tether/protocol';
import type { AgentProviderV1InputPart } from '@tether/provider-spec';
import { decideSubmitTurn, refuseNewRun } from '../../state/session-machine.js';
import type { SessionEntry } from '../session-entry.js';
import {
  requireInputCapabilities,
  resolveTurnInput,
  turnForAgent,
  turnInputPlace,
} from '../turn-input/resolve-turn-input.js';
import { type CommandContext, accepted, requireCapability } from './command-context.js';
import type { CommandFingerprint } from '../command-fingerprint.js';

/**
 * Reads and checks the turn's input, records the run (with the images' bytes, unless redacted, in
 * the same transaction), then hands the turn to the agent in the background (the receipt does not
 * wait for it). With a delivery, a turn submitted while a run is active is a follow-up instead:
 * queued as the next run (after_turn) or handed into the running run (steer).
 */
export async function submitTurn(
  context: CommandContext,
  command: SubmitTurnCommand,
  fingerprint: CommandFingerprint,
): Promise<SubmitTurnReceipt> {
  const before = context.entries.get(command.sessionId);
  // A session that cannot take the turn says so before any file is read.
  const blocked = refuseNewRun(before?.record, command.delivery);
  if (blocked) throw blocked.refusal;
  if (command.delivery === 'steer' && before?.record.activeRunId) requireSteering(before);
  requireInputCapabilities(before?.provider ?? null, command.input);
  const input = await resolveTurnInput(command.input, turnInputPlace(before!.record));
  // Read only for a turn with images: the conversation's own count against the API's per-request limits.
  if (input.images.length > 0)
    checkConversationImages(await conversationImages(context.store, command.sessionId), input.recorded);
  // Decided after the input was read: another command may have started a run meanwhile.
  const found = context.entries.get(command.sessionId);
  const { entry, decision } = accepted(
    found,
    decideSubmitTurn(found?.record, command, { newRunId, newInputId, input: input.recorded }),
  );
  const { runId, queued } = decision;
  if (queued?.delivery === 'steer') requireSteering(entry);
  const receipt: SubmitTurnReceipt = {
    type: 'submit_turn',
    commandId: command.commandId,
    sessionId: command.sessionId,
    runId,
    ...(queued ? { inputId: queued.inputId, queued: true } : {}),
  };
  const blobs = decision.inputRecorded ? input.images.map((image) => ({ ...image, sessionId: command.sessionId })) : [];
  // Held before the write: the active run may end (and start the next input) the moment it is stored.
  if (queued?.delivery === 'after_turn') {
    context.inputs.hold(queued.inputId, {
      runId,
      recorded: decision.inputRecorded ? input.recorded : null,
      provider: input.provider,
      files: input.files,
    });
  }
  try {
    await context.write(entry, decision.events, receipt, fingerprint, blobs);
  } catch (error) {
    if (queued) context.inputs.drop(queued.inputId);
    throw error;
  }
  if (!queued) {
    const turn = turnForAgent(runId, input.provider, input.files, () => turnInputPlace(entry.record));
    context.startRun(entry, runId, (session) => session.doTurn(turn));
  } else if (queued.delivery === 'steer') void steer(context, entry, runId, queued.inputId, input.provider);
  return receipt;
}

function requireSteering(entry: SessionEntry): void {
  const runId = entry.record.activeRunId;
  if (runId !== null && entry.interruptRequested.has(runId))
    // Taken in, it would carry on the run the host is stopping; cancelled with it otherwise.
    throw new AgentError({
      code: 'run_active',
      message:
        'The active run is being stopped (interrupt_run), and a steer would go with it. Submit with delivery after_turn (it runs once the run has ended, unless the stop cancels the queue), or as a new turn then.',
      details: { reason: 'run_stopping' },
    });
  const control = entry.activeControl;
  if (control !== null && control.runId === entry.record.activeRunId)
    // The agent runs a slash command, not a turn: what is steered into it would be dropped.
    throw new AgentError({
      code: 'run_active',
      message: `The active run is the ${control.name} control, which takes no follow-up while it runs. Submit with delivery after_turn instead (it runs once the control has ended).`,
      details: { reason: 'control_active' },
    });
  requireCapability(
    entry.provider,
    (can) => can.steer === true,
    'take a follow-up into the running turn; submit it with delivery after_turn instead',
    'steer',
  );
}

/** Hands the steer to the agent; one it cannot take ends at once (agent_refused, with why). */
async function steer(
  context: CommandContext,
  entry: SessionEntry,
  runId: string,
  inputId: string,
  input: readonly AgentProviderV1InputPart[],
): Promise<void> {
  try {
    const session = await context.providerSession(entry);
    if (!session.doSteer) throw new Error(`The ${entry.record.provider} provider's session has no doSteer.`);
    // A run not yet handed to the agent (its worktree's baseline being taken) is unknown to it: the
    // steer waits, and goes only if it was not withdrawn (or ended with its run) meanwhile.
    await entry.handedOver(runId);
    if (!(entry.record.queuedInputs ?? []).some((queued) => queued.inputId === inputId)) return;
    await session.doSteer({ runId, inputId, input });
  } catch (error) {
    const stillQueued = (entry.record.queuedInputs ?? []).some((queued) => queued.inputId === inputId);
    if (!stillQueued) return;
    // The host stopped the run meanwhile: the steer goes with it, as the stop's own steers do (resending it would undo the stop).
    const stopped = entry.interruptRequested.has(runId);
    context.log.stage(entry, [
      stopped
        ? { type: 'input.cancelled', inputId, runId, reason: 'interrupted' }
        : { type: 'input.cancelled', inputId, runId, reason: 'agent_refused', error: toAgentError(error).toObject() },
    ]);
  }
}
