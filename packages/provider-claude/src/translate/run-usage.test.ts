import { describe, expect, it } from 'vitest';
import { recordedTurns } from './recorded-turns.js';
import { replayTranscript } from './replay-transcript.js';

describe('run usage from the result frame', () => {
  // The real CLI's frames for an answered turn, then one interrupted after its first delta.
  const frames = recordedTurns.stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as unknown);
  const [answered, stopped] = recordedTurns.sends;
  const usage = replayTranscript(frames, [{ uuid: answered }, { uuid: stopped, interrupted: true }]).filter(
    (part) => part.type === 'run.usage',
  );

  it('an answered turn: the tokens and cost of its call', () => {
    expect(usage[0]).toEqual({
      type: 'run.usage',
      runId: 'run_1',
      inputTokens: 10,
      outputTokens: 5,
      cacheReadTokens: 0,
      cacheCreationTokens: 0,
      costUsd: 0.00014000000000000001,
    });
  });

  it('an interrupted turn: its result `usage` counts nothing, the per-model counts since the last result hold the cut call', () => {
    expect(usage[1]).toEqual({
      type: 'run.usage',
      runId: 'run_2',
      inputTokens: 10,
      outputTokens: 2,
      cacheReadTokens: 0,
      cacheCreationTokens: 0,
      costUsd: 0.00007999999999999999,
    });
  });
});
