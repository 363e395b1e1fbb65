import type { EventBody } from '@tether/protocol';
import { describe, expect, it } from 'vitest';
import { applyEvent, canForkAt, canRestoreFilesOf, canRewindTo, turnNumber } from './conversation-state.js';
import { fold, openedBody, testSessionId as sessionId } from './conversation-test-events.js';

const sourceId = `ses_${'d'.repeat(32)}`;
const forkId = `ses_${'e'.repeat(32)}`;
const runIds = ['1', '2', '3', '4'].map((digit) => `run_${digit.repeat(32)}`);
const [first, second, third, fourth] = runIds as [string, string, string, string];
const sha256 = 'f'.repeat(64);

function turn(runId: string, text: string, lastMessageId: string | null = `msg-${runId}`): EventBody[] {
  return [
    { type: 'run.started', runId, input: [{ type: 'text', text }], inputRedacted: false },
    { type: 'run.message_delta', runId, blockId: `b-${runId}`, text: `answer to ${text}` },
    {
      type: 'run.checkpointed',
      runId,
      providerSessionId: 'conversation-1',
      inputMessageId: `in-${runId}`,
      lastMessageId,
    },
    { type: 'run.completed', runId, outcome: 'succeeded' },
  ];
}

describe('the conversation state: input parts, checkpoints, forks and rewinds', () => {
  it('keeps a turn’s text apart from its images and files, in the order they were given', () => {
    const image = {
      type: 'image' as const,
      mediaType: 'image/png' as const,
      sha256,
      byteLength: 68,
      width: 1,
      height: 1,
    };
    const state = fold([
      {
        type: 'run.started',
        runId: first,
        input: [
          { type: 'text', text: 'What is wrong here?' },
          image,
          { type: 'file', path: 'src/app.ts' },
          { type: 'text', text: 'Be brief.' },
        ],
        inputRedacted: false,
      },
    ]);
    expect(state.runs[0]).toMatchObject({
      input: 'What is wrong here?\nBe brief.',
      attachments: [image, { type: 'file', path: 'src/app.ts' }],
    });
  });

  it('a redacted turn has no text and no attachments', () => {
    const state = fold([{ type: 'run.started', runId: first, input: null, inputRedacted: true }]);
    expect(state.runs[0]).toMatchObject({ input: null, attachments: [], inputRedacted: true });
  });

  it('records the checkpoint of a run: a completed turn with a last message can be forked from', () => {
    const running = fold([
      ...turn(first, 'one'),
      { type: 'run.started', runId: second, input: [{ type: 'text', text: 'two' }], inputRedacted: false },
    ]);
    expect(running.runs[0]!.checkpoint).toEqual({ inputMessageId: `in-${first}`, lastMessageId: `msg-${first}` });
    expect(canForkAt(running.runs[0]!)).toBe(true);
    expect(canForkAt(running.runs[1]!)).toBe(false);
    expect(canRewindTo(running.runs[1]!)).toBe(false);

    const silent = fold(turn(first, 'one', null));
    expect(canForkAt(silent.runs[0]!)).toBe(false);
    expect(canRewindTo(silent.runs[0]!)).toBe(true);
  });

  it('offers files back only for a turn with an input checkpoint and no /clear since', () => {
    const clear: EventBody[] = [
      { type: 'run.started', runId: second, input: null, inputRedacted: false, control: { name: 'clear' } },
      { type: 'context.cleared', runId: second },
      {
        type: 'run.checkpointed',
        runId: second,
        providerSessionId: 'conversation-2',
        inputMessageId: null,
        lastMessageId: null,
      },
      { type: 'run.completed', runId: second, outcome: 'succeeded' },
    ];
    const state = fold([...turn(first, 'one'), ...clear, ...turn(third, 'three')]);
    expect(canRestoreFilesOf(state.runs, state.runs[0]!)).toBe(false);
    expect(canRestoreFilesOf(state.runs, state.runs[1]!)).toBe(false);
    expect(canRestoreFilesOf(state.runs, state.runs[2]!)).toBe(true);
    // A rewind took the clear back out: the turn before it is in the agent's context again.
    const rewound = fold([...turn(first, 'one'), ...clear, { type: 'session.rewound', toRunId: second, files: null }]);
    expect(canRestoreFilesOf(rewound.runs, rewound.runs[0]!)).toBe(true);
  });

  it('numbers turns without counting controls', () => {
    const state = fold([
      ...turn(first, 'one'),
      { type: 'run.started', runId: second, input: null, inputRedacted: false, control: { name: 'cost' } },
      { type: 'run.completed', runId: second, outcome: 'succeeded' },
      ...turn(third, 'three'),
    ]);
    expect(turnNumber(state, third)).toBe(2);
    expect(turnNumber(state, second)).toBeNull();
    expect(canForkAt(state.runs[1]!)).toBe(false);
  });

  it('marks the run a rewind went back to, and every later one, as rewound; later turns are not', () => {
    const files = { paths: ['/repo/a.txt'], insertions: 1, deletions: 2 };
    const state = fold([
      ...turn(first, 'one'),
      ...turn(second, 'two'),
      ...turn(third, 'three'),
      { type: 'session.rewound', toRunId: second, files },
      ...turn(fourth, 'four'),
    ]);
    expect(state.runs.map((run) => run.rewound)).toEqual([false, true, true, false]);
    expect(state.runs.map((run) => run.rewoundTo)).toEqual([null, { files }, null, null]);
    expect(canRewindTo(state.runs[2]!)).toBe(false);
    expect(canRewindTo(state.runs[3]!)).toBe(true);
    // The history before a rewind stays readable, and a fork can still end with a rewound turn.
    expect(state.runs[1]!.parts).toHaveLength(1);
    expect(canForkAt(state.runs[1]!)).toBe(true);

    const further = applyEvent(state, {
      type: 'session.rewound',
      toRunId: first,
      files: null,
      sessionId,
      seq: state.lastSeq + 1,
      at: 'x',
    });
    expect(further.runs.map((run) => run.rewound)).toEqual([true, true, true, true]);
    expect(further.runs.map((run) => run.rewoundTo)).toEqual([{ files: null }, { files }, null, null]);
  });

  it('notes where a fork came from, and the forks made of a run or of the whole conversation', () => {
    const fork = fold([openedBody({ forkedFrom: { sessionId: sourceId, runId: first } })]);
    expect(fork.forkedFrom).toEqual({ sessionId: sourceId, runId: first });

    const source = fold([
      ...turn(first, 'one'),
      { type: 'session.forked', forkSessionId: forkId, atRunId: first },
      { type: 'session.forked', forkSessionId: sourceId, atRunId: null },
    ]);
    expect(source.forkedFrom).toBeNull();
    expect(source.runs[0]!.forks).toEqual([forkId]);
    expect(source.forks).toEqual([sourceId]);
  });
});
