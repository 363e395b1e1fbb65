import type { AgentProviderV1Part } from '@tether/provider-spec';
import type { ActiveTurn, TranslatorState } from './translator-state.js';

/**
 * Where the conversation stands after `turn` (run.checkpointed): the conversation it ran in, the
 * uuid stamped on its input (the agent keeps file checkpoints under it) and its last answer's
 * transcript id (a copy can be cut after it). For /compact, after the summary it replaced the
 * conversation with (a copy made later must not take what came after it). For /clear, the new
 * conversation, empty (no ids: its entries' ids are never shown, and a copy cut there holds
 * nothing). For a turn the CLI began by itself, only its answer (its input's id is never shown), and
 * none when it answered nothing. None for the other slash commands: they add nothing to cut after.
 * A slash command typed as a turn's text counts as the control (`localCommand`, from the result).
 * None either while no conversation exists the agent could copy (a refused start, an ephemeral session).
 */
export function checkpointOf(
  state: TranslatorState,
  turn: ActiveTurn,
  localCommand?: string,
): AgentProviderV1Part | null {
  if (!state.keepsTranscript || !state.conversationEstablished || state.providerSessionId === null) return null;
  const ids = checkpointIds(turn, turn.control ?? localCommand);
  if (ids === null) return null;
  return { type: 'run.checkpointed', runId: turn.runId, providerSessionId: state.providerSessionId, ...ids };
}

function checkpointIds(
  turn: ActiveTurn,
  command: string | undefined,
): { inputMessageId: string | null; lastMessageId: string | null } | null {
  const lastMessageId = turn.lastMessageId ?? null;
  if (turn.conversationReset) return { inputMessageId: null, lastMessageId: null };
  if (command === 'compact') return lastMessageId === null ? null : { inputMessageId: turn.uuid, lastMessageId };
  if (command !== undefined) return null;
  if (turn.startedByAgent) return lastMessageId === null ? null : { inputMessageId: null, lastMessageId };
  return { inputMessageId: turn.runInputUuid ?? turn.uuid, lastMessageId };
}
