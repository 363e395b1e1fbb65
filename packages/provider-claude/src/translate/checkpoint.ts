import type { AgentProviderV1Part } from '@tether/provider-spec';
import type { ActiveTurn, TranslatorState } from './translator-state.js';

/**
 * Where the conversation stands after `turn` (run.checkpointed): the conversation it ran in, the
 * uuid stamped on its input (the agent keeps file checkpoints under it) and its last answer's
 * transcript id (a copy can be cut after it). For /compact, after the summary it replaced the
 * conversation with (a copy made later must not take what came after it). None for the other
 * controls: /clear starts another conversation, and the rest add nothing to cut after. None for a
 * turn the CLI began by itself: its input's id is never shown. None either while no conversation
 * exists the agent could copy (a refused start, an ephemeral session).
 */
export function checkpointOf(state: TranslatorState, turn: ActiveTurn): AgentProviderV1Part | null {
  const compacted = turn.control === 'compact' && turn.lastMessageId !== undefined;
  if ((turn.control !== undefined && !compacted) || turn.startedByAgent || !state.keepsTranscript) return null;
  if (!state.conversationEstablished || state.providerSessionId === null) return null;
  return {
    type: 'run.checkpointed',
    runId: turn.runId,
    providerSessionId: state.providerSessionId,
    inputMessageId: turn.uuid,
    lastMessageId: turn.lastMessageId ?? null,
  };
}
