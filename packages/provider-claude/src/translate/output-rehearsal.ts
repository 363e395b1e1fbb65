import type { AgentProviderV1Part } from '@tether/provider-spec';
import { recordedTurns } from './recorded-turns.js';
import { replayTranscript } from './replay-transcript.js';

/** The recorded turns, read as a session reads them: run_1 answered, run_2 stopped by the host. */
export function replayRecordedTurns(): AgentProviderV1Part[] {
  const frames = recordedTurns.stdout
    .split('\n')
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line) as unknown);
  const [answered, stopped] = recordedTurns.sends;
  return replayTranscript(frames, [{ uuid: answered }, { uuid: stopped, interrupted: true }]);
}

let rehearsed = false;

/**
 * Reads a recorded agent's output once, through the frame checks and the translator, and throws the
 * result away. The first time a process runs them (zod's schemas set up, V8 compiling and learning
 * their code) costs a few milliseconds; without this a host's first turn pays them between the
 * agent's first delta and its subscriber, and its first stop between the agent's result and the
 * run's end (docs/decisions/2026-12-02-first-turn-code-run-at-start-up.md). Never throws: it is a
 * head start, nothing depends on it.
 */
export function rehearseOutputReading(): void {
  // What it warms up belongs to the process: a second provider in it has nothing left to learn.
  if (rehearsed) return;
  rehearsed = true;
  try {
    replayRecordedTurns();
  } catch {
    // Only a head start: the first real output is read all the same.
  }
}
