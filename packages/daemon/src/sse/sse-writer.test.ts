import type { ProtocolEvent } from '@tether/protocol';
import { describe, expect, it } from 'vitest';
import { ssePingFrame, sseEventFrame, sseOverflowFrame, streamStartSeq } from './sse-writer.js';

const event = {
  type: 'run.message_delta',
  sessionId: 'ses_00000000000000000000000000000001',
  seq: 42,
  at: '2026-01-01T00:00:00.000Z',
  runId: 'run_00000000000000000000000000000001',
  blockId: 'b1',
  text: 'two\nlines\r\nand\u2028more',
} as unknown as ProtocolEvent;

describe('SSE framing', () => {
  it('writes an event as its seq id and one data line, with no event line', () => {
    const frame = Buffer.from(sseEventFrame(event)).toString();
    expect(frame.startsWith('id: 42\ndata: {')).toBe(true);
    expect(frame.endsWith('}\n\n')).toBe(true);
    // Newlines in the text are escaped by JSON: exactly two lines before the blank one.
    expect(frame.slice(0, -2).split(/\r\n|\r|\n/)).toHaveLength(2);
    expect(JSON.parse(frame.slice('id: 42\ndata: '.length, -2))).toEqual(event);
    expect(frame).not.toContain('event:');
  });

  it('writes the overflow and ping frames', () => {
    expect(Buffer.from(sseOverflowFrame(17)).toString()).toBe('event: overflow\ndata: {"lastSeq":17}\n\n');
    expect(Buffer.from(ssePingFrame).toString()).toBe(': ping\n\n');
  });

  it('serializes an event once, however many subscribers it goes to', () => {
    const copy = { ...event } as ProtocolEvent;
    expect(sseEventFrame(copy)).toBe(sseEventFrame(copy));
    expect(Buffer.from(sseEventFrame(copy)).equals(Buffer.from(sseEventFrame(event)))).toBe(true);
  });
});

describe('where a stream starts', () => {
  it('takes Last-Event-ID over ?after, else ?after, else 0', () => {
    expect(streamStartSeq('12', '3')).toBe(12);
    expect(streamStartSeq(undefined, '3')).toBe(3);
    expect(streamStartSeq('', '3')).toBe(3);
    expect(streamStartSeq('', undefined)).toBe(0);
    expect(streamStartSeq(undefined, undefined)).toBe(0);
    expect(streamStartSeq('0', undefined)).toBe(0);
  });

  it('refuses what is not a sequence number', () => {
    for (const [header, after] of [
      ['-1', undefined],
      ['1.5', undefined],
      [undefined, 'abc'],
      [undefined, '1e3'],
      // An ?after given empty, or wrong beside a good Last-Event-ID, is a mistake all the same.
      [undefined, ''],
      ['5', 'abc'],
      ['99999999999999999', undefined],
    ] as const) {
      expect(() => streamStartSeq(header, after)).toThrow(
        expect.objectContaining({ code: 'invalid_command', details: { reason: 'invalid_start_seq' } }),
      );
    }
  });
});
