import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { type DecodedLine, LineDecoder } from '../codec/line-decoder.js';
import { TextDeltaJoiner, textReleaseIntervalMs } from './text-delta-joining.js';

// The lines as CLI 2.1.332 prints them (see __fixtures__/text-turn.ndjson and thinking-turn.ndjson).
interface DeltaLine {
  readonly kind: 'text' | 'thinking';
  readonly index: number;
  readonly text: string;
  readonly parentToolUseId?: string;
  readonly stamp?: string;
}

function deltaFrame({ kind, index, text, parentToolUseId, stamp }: DeltaLine): Record<string, unknown> {
  return {
    type: 'stream_event',
    event: {
      type: 'content_block_delta',
      index,
      delta: kind === 'text' ? { type: 'text_delta', text } : { type: 'thinking_delta', thinking: text },
    },
    session_id: 'bde56503-3d8b-4fc2-88bb-3bb84e14fb91',
    parent_tool_use_id: parentToolUseId ?? null,
    uuid: 'b81629a4-426b-481f-90e8-5e935091a71f',
    ...(kind === 'thinking' ? { thinking_display: 'updates' } : {}),
    ...(stamp ? { user_message_uuid: stamp } : {}),
    api_message_id: 'msg_01hyuPho4RgvjFSjxubxkP6NsC',
  };
}

const deltaLine = (line: DeltaLine) => JSON.stringify(deltaFrame(line));
const otherLine = JSON.stringify({ type: 'stream_event', event: { type: 'content_block_stop', index: 0 } });

/** The text a released frame carries, with what identifies its block. */
function released(frame: Record<string, unknown>): { kind: string; index: unknown; text: unknown } {
  const event = frame['event'] as { index: unknown; delta: Record<string, unknown> };
  const kind = event.delta['type'] === 'text_delta' ? 'text' : 'thinking';
  return { kind, index: event.index, text: event.delta[kind] };
}

/** Lines through the decoder and the joiner as the cli connection wires them, read by read. */
function throughJoiner(reads: readonly string[]): Array<{ kind: string; index?: unknown; text?: unknown }> {
  const out: Array<{ kind: string; index?: unknown; text?: unknown }> = [];
  const joiner = new TextDeltaJoiner((frame) => out.push(released(frame)));
  const decoder = new LineDecoder({ takeLine: (text) => joiner.takeLine(text) });
  const onLine = (line: DecodedLine) => {
    if (line.kind === 'json' && joiner.offer(line.value)) return;
    joiner.flush();
    out.push({ kind: line.kind === 'json' ? `other:${(line.value as { type: string }).type}` : line.kind });
  };
  for (const read of reads) {
    decoder.push(read, onLine);
    joiner.afterRead();
  }
  decoder.end(onLine);
  joiner.flush();
  return out;
}

describe('TextDeltaJoiner', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('hands on a read’s deltas of one block as one frame, their texts joined, at the end of the read', () => {
    const out: Array<Record<string, unknown>> = [];
    const joiner = new TextDeltaJoiner((frame) => out.push(frame));
    expect(joiner.offer(deltaFrame({ kind: 'text', index: 0, text: 'Hel' }))).toBe(true);
    expect(joiner.takeLine(deltaLine({ kind: 'text', index: 0, text: 'lo, ' }))).toBe(true);
    expect(joiner.offer(deltaFrame({ kind: 'text', index: 0, text: 'world' }))).toBe(true);
    expect(out).toEqual([]);
    joiner.afterRead();
    expect(out.map(released)).toEqual([{ kind: 'text', index: 0, text: 'Hello, world' }]);
  });

  it('releases later deltas once the interval since the last release has passed, on its own timer', () => {
    const out: Array<Record<string, unknown>> = [];
    const joiner = new TextDeltaJoiner((frame) => out.push(frame));
    joiner.offer(deltaFrame({ kind: 'text', index: 0, text: 'a' }));
    joiner.afterRead();
    joiner.offer(deltaFrame({ kind: 'text', index: 0, text: 'b' }));
    joiner.afterRead();
    joiner.takeLine(deltaLine({ kind: 'text', index: 0, text: 'c' }));
    joiner.afterRead();
    expect(out.map(released).map((part) => part.text)).toEqual(['a']);
    vi.advanceTimersByTime(textReleaseIntervalMs - 1);
    expect(out).toHaveLength(1);
    vi.advanceTimersByTime(1);
    expect(out.map(released).map((part) => part.text)).toEqual(['a', 'bc']);
  });

  it('releases what it holds before any other line, and at the stream’s end', () => {
    expect(
      throughJoiner([
        `${deltaLine({ kind: 'text', index: 0, text: 'x' })}\n${otherLine}\n${deltaLine({ kind: 'text', index: 1, text: 'y' })}`,
      ]),
    ).toEqual([
      { kind: 'text', index: 0, text: 'x' },
      { kind: 'other:stream_event' },
      { kind: 'text', index: 1, text: 'y' },
    ]);
  });

  it('never joins deltas of another block, another kind, a subagent or a stamped one', () => {
    const first: DeltaLine = { kind: 'text', index: 0, text: 'a' };
    for (const next of [
      { kind: 'text', index: 1, text: 'b' },
      { kind: 'thinking', index: 0, text: 'b' },
      { kind: 'text', index: 0, text: 'b', parentToolUseId: 'toolu_01' },
    ] satisfies DeltaLine[]) {
      const out = throughJoiner([`${deltaLine(first)}\n${deltaLine(next)}\n`]);
      expect(out).toEqual([released(deltaFrame(first)), released(deltaFrame(next))]);
    }
    // A stamped delta names the turn's input: it is read on its own, as any other line.
    const stamped = throughJoiner([
      `${deltaLine(first)}\n${deltaLine({ kind: 'text', index: 0, text: 'b', stamp: 'f1e7ff51-3c5b-47c4-9011-3a8335ec77c2' })}\n`,
    ]);
    expect(stamped).toEqual([released(deltaFrame(first)), { kind: 'other:stream_event' }]);
  });

  it('reads a continuation from its text exactly as JSON.parse would, escapes included', () => {
    const texts = ['quote " and backslash \\', 'line\nbreak\ttab', 'é 日本 🙂', '\u0000\u001f', '\ud800 lone'];
    const joiner = new TextDeltaJoiner(() => {});
    joiner.offer(deltaFrame({ kind: 'text', index: 0, text: '' }));
    for (const text of texts) expect(joiner.takeLine(deltaLine({ kind: 'text', index: 0, text }))).toBe(true);
    const out: Array<Record<string, unknown>> = [];
    const probe = new TextDeltaJoiner((frame) => out.push(frame));
    probe.offer(deltaFrame({ kind: 'thinking', index: 2, text: '' }));
    for (const text of texts) probe.takeLine(deltaLine({ kind: 'thinking', index: 2, text }));
    probe.flush();
    expect(released(out[0]!)).toEqual({ kind: 'thinking', index: 2, text: texts.join('') });
  });

  it('leaves to the parse whatever is not exactly a continuation line', () => {
    const joiner = new TextDeltaJoiner(() => {});
    const line = deltaLine({ kind: 'text', index: 0, text: 'b' });
    // Nothing held yet: the first delta is parsed.
    expect(joiner.takeLine(line)).toBe(false);
    joiner.offer(deltaFrame({ kind: 'text', index: 0, text: 'a' }));
    for (const refused of [
      deltaLine({ kind: 'text', index: 1, text: 'b' }),
      deltaLine({ kind: 'thinking', index: 0, text: 'b' }),
      deltaLine({ kind: 'text', index: 0, text: 'b', parentToolUseId: 'toolu_01' }),
      line.replace('"text":"b"', '"text":"\\x"'),
      line.replace('"text":"b"', '"text":"a\u0001b"'),
      line.replace('"text":"b"', '"text":"\\u12"'),
      line.replace('"uuid"', '"user_message_uuid":"f1e7ff51-3c5b-47c4-9011-3a8335ec77c2","uuid"'),
      line.replace('{"type":"stream_event",', '{ "type":"stream_event",'),
      `${line} `,
      line.replace('"index":0', '"index":00'),
    ]) {
      expect(joiner.takeLine(refused)).toBe(false);
    }
  });

  it('parses a very long delta line instead of reading it as text, and still joins its text', () => {
    // The pattern's backtracking grows with the line: read as text, a 10 MB line overflowed the stack.
    const long = 'x'.repeat(5_000_000) + '\\"'.repeat(2_500_000);
    const out = throughJoiner([
      `${deltaLine({ kind: 'text', index: 0, text: 'a' })}\n${deltaLine({ kind: 'text', index: 0, text: long })}\n${otherLine}\n`,
    ]);
    expect(out).toEqual([{ kind: 'text', index: 0, text: `a${long}` }, { kind: 'other:stream_event' }]);
  });
});

describe('TextDeltaJoiner (property-based)', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  const delta = fc.record({
    kind: fc.constantFrom<'text' | 'thinking'>('text', 'thinking'),
    index: fc.integer({ min: 0, max: 1 }),
    // Arbitrary text, and often what JSON escapes or encodes in several bytes.
    text: fc
      .array(
        fc.oneof(
          fc.string({ unit: 'binary', maxLength: 4 }),
          fc.constantFrom('"', '\\', '\n', '\u0001', 'é', '🙂', '\ud800'),
        ),
        { maxLength: 4 },
      )
      .map((pieces) => pieces.join('')),
    parentToolUseId: fc.option(fc.constant('toolu_01'), { nil: undefined, freq: 4 }),
  });
  const item = fc.oneof(
    { weight: 6, arbitrary: delta.map((line) => ({ line: deltaLine(line), delta: line })) },
    { weight: 1, arbitrary: fc.constant({ line: otherLine, delta: undefined }) },
  );

  it('hands on every delta’s text, byte for byte and in order, whatever the reads', () => {
    fc.assert(
      fc.property(fc.array(item, { maxLength: 40 }), fc.array(fc.nat(), { maxLength: 8 }), (items, cuts) => {
        const stream = Buffer.from(items.map((entry) => `${entry.line}\n`).join(''));
        const points = [0, ...cuts.map((point) => point % (stream.length + 1)), stream.length].sort((a, b) => a - b);
        const reads = points.slice(1).map((point, index) => stream.subarray(points[index], point));
        // What went in, and what came out, each with consecutive deltas of one block joined.
        type Entry = { kind: string; index?: unknown; text?: unknown; parent?: unknown };
        const merge = (entries: readonly Entry[]) =>
          entries.reduce<Entry[]>((merged, entry) => {
            const last = merged.at(-1);
            if (last && entry.text !== undefined && last.text !== undefined && last.kind === entry.kind) {
              if (last.index === entry.index && last.parent === entry.parent) {
                merged[merged.length - 1] = { ...last, text: `${last.text}${entry.text}` };
                return merged;
              }
            }
            merged.push(entry);
            return merged;
          }, []);
        const expected = merge(
          items.map((entry) =>
            entry.delta
              ? {
                  kind: entry.delta.kind,
                  index: entry.delta.index,
                  text: entry.delta.text,
                  parent: entry.delta.parentToolUseId ?? null,
                }
              : { kind: 'other:stream_event' },
          ),
        );
        const out: Entry[] = [];
        const joiner = new TextDeltaJoiner((frame) =>
          out.push({ ...released(frame), parent: (frame as { parent_tool_use_id: unknown }).parent_tool_use_id }),
        );
        const decoder = new LineDecoder({ takeLine: (text) => joiner.takeLine(text) });
        const onLine = (line: DecodedLine) => {
          if (line.kind === 'json' && joiner.offer(line.value)) return;
          joiner.flush();
          out.push({ kind: line.kind === 'json' ? 'other:stream_event' : line.kind });
        };
        for (const read of reads) {
          decoder.push(read, onLine);
          joiner.afterRead();
        }
        decoder.end(onLine);
        joiner.flush();
        expect(merge(out)).toEqual(expected);
      }),
    );
  });
});
