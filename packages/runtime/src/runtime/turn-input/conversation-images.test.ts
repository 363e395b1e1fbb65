import type { InputPart, ProtocolEvent } from '@tether/protocol';
import { describe, expect, it } from 'vitest';
import { imagesInConversation } from './conversation-images.js';

const image: InputPart = {
  type: 'image',
  mediaType: 'image/png',
  sha256: 'a'.repeat(64),
  byteLength: 1_000,
  width: 3,
  height: 2,
};
const runId = (digit: string) => `run_${digit.repeat(32)}`;
let seq = 0;
const event = (body: Record<string, unknown>) =>
  ({
    ...body,
    sessionId: `ses_${'0'.repeat(32)}`,
    seq: ++seq,
    at: '2026-12-06T06:00:00.000Z',
  }) as unknown as ProtocolEvent;
const started = (digit: string, images: number) =>
  event({
    type: 'run.started',
    runId: runId(digit),
    input: Array.from({ length: images }, () => image),
    inputRedacted: false,
  });

describe('the images a conversation carries', () => {
  it('counts the runs still in it: not those a rewind took out, nor those before a compaction', () => {
    expect(imagesInConversation([started('1', 2), started('2', 3)])).toEqual({ count: 5, bytes: 5_000 });
    // Rewound to before run 2: its images left the conversation.
    expect(
      imagesInConversation([
        started('1', 2),
        started('2', 3),
        event({ type: 'session.rewound', toRunId: runId('2'), files: null }),
      ]),
    ).toEqual({ count: 2, bytes: 2_000 });
    // Compacted in run 3: what came before is a summary.
    expect(
      imagesInConversation([
        started('1', 2),
        started('3', 0),
        event({
          type: 'context.compacted',
          runId: runId('3'),
          trigger: 'requested',
          tokensBefore: null,
          tokensAfter: null,
        }),
        started('4', 1),
      ]),
    ).toEqual({ count: 1, bytes: 1_000 });
    // A redacted turn's images are not known.
    expect(
      imagesInConversation([event({ type: 'run.started', runId: runId('5'), input: null, inputRedacted: true })]),
    ).toEqual({
      count: 0,
      bytes: 0,
    });
  });
});
