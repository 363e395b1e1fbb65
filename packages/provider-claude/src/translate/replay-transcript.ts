import type { AgentProviderV1Part } from '@tether/provider-spec';
import { parseCliFrame } from '../frames/cli-frame-schemas.js';
import { beginsTurnOfItsOwn, turnOfItsOwn } from './correlation.js';
import { translateFrame } from './translate-frame.js';
import { createTranslatorState } from './translator-state.js';

/** A user line written to the CLI: the uuid stamped on it, and whether the host stopped its turn. */
export interface RecordedSend {
  readonly uuid: string;
  readonly interrupted?: boolean;
}

/**
 * Replays recorded CLI stdout frames through the frame checks and the translator the way a session
 * does: each send becomes the active turn (run_1, run_2, …) once the previous one ended, and a turn
 * the CLI begins by itself meanwhile is a run of its own (agent_run_1, …).
 */
export function replayTranscript(
  frames: Iterable<unknown>,
  sends: readonly RecordedSend[],
  options: { providerSessionId?: string } = {},
): AgentProviderV1Part[] {
  const state = createTranslatorState({
    providerSessionId: options.providerSessionId ?? null,
    reportedProviderSessionId: null,
    conversationEstablished: false,
  });
  const parts: AgentProviderV1Part[] = [];
  let next = 0;
  const startNext = () => {
    const send = sends[next];
    if (!send) return;
    next += 1;
    state.turn = {
      runId: `run_${next}`,
      uuid: send.uuid,
      started: false,
      toolsRunning: 0,
      interruptRequested: send.interrupted === true,
    };
  };
  let agentRuns = 0;
  startNext();
  for (const value of frames) {
    const frame = parseCliFrame(value);
    if (state.turn === null && beginsTurnOfItsOwn(state, frame)) state.turn = turnOfItsOwn(`agent_run_${++agentRuns}`);
    parts.push(...translateFrame(state, frame));
    if (state.turn === null) startNext();
  }
  return parts;
}
