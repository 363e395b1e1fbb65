import { describe, expect, it } from 'vitest';
import { replayRecordedTurns } from './output-rehearsal.js';

describe('the recorded turns read at start-up (output-rehearsal.ts)', () => {
  it('are what a session reads: streamed text, usage and the end of a turn, then a turn ended by a stop', () => {
    const parts = replayRecordedTurns();
    const ofRun = (runId: string) => parts.filter((part) => 'runId' in part && part.runId === runId);

    const answered = ofRun('run_1');
    expect(answered.map((part) => part.type)).toEqual(
      expect.arrayContaining(['run.message_delta', 'run.usage', 'run.completed']),
    );
    expect(answered.at(-1)).toMatchObject({ type: 'run.completed', outcome: 'succeeded', stopReason: 'end_turn' });
    const text = answered.flatMap((part) => (part.type === 'run.message_delta' ? [part.text] : [])).join('');
    expect(text).toBe('Done: w0001 w0002.');

    const stopped = ofRun('run_2');
    expect(stopped.some((part) => part.type === 'run.message_delta')).toBe(true);
    expect(stopped.at(-1)).toMatchObject({ type: 'run.completed', outcome: 'interrupted' });
    expect(parts.some((part) => part.type === 'diagnostic')).toBe(false);
  });
});
