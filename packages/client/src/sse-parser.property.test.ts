import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type SseFrame, SseParser } from './sse-parser.js';

// The network cuts a stream wherever it likes: the frames must not depend on where.

function parseChunks(chunks: readonly string[]): SseFrame[] {
  const parser = new SseParser();
  return chunks.flatMap((chunk) => parser.push(chunk));
}

function cut(text: string, cuts: readonly number[]): string[] {
  const points = [0, ...cuts.map((point) => point % (text.length + 1))].sort((left, right) => left - right);
  return points.map((point, index) => text.slice(point, points[index + 1]));
}

const cuts = fc.array(fc.nat(), { maxLength: 16 });
const lineEnding = fc.constantFrom('\n', '\r\n', '\r');
/** Field text: anything but a line break (SSE has no escaping), sometimes with a leading space or a colon. */
const fieldText = fc.string({ unit: 'grapheme', maxLength: 20 }).map((text) => text.replace(/[\r\n]/g, '_'));

const frame = fc.record(
  {
    id: fieldText.filter((text) => !text.includes('\0')),
    event: fieldText.filter((text) => text.length > 0),
    data: fc.array(fieldText, { minLength: 1, maxLength: 3 }),
    comment: fieldText,
  },
  { requiredKeys: ['data'] },
);

type FrameSpec = typeof frame extends fc.Arbitrary<infer Value> ? Value : never;

function serialise(spec: FrameSpec, ending: string): string {
  const lines = [
    ...(spec.comment === undefined ? [] : [`:${spec.comment}`]),
    ...(spec.event === undefined ? [] : [`event: ${spec.event}`]),
    ...(spec.id === undefined ? [] : [`id: ${spec.id}`]),
    ...spec.data.map((line) => `data: ${line}`),
  ];
  return `${lines.map((line) => line + ending).join('')}${ending}`;
}

describe('SseParser (property-based)', () => {
  it('parses arbitrary text cut at arbitrary points exactly as the uncut text, without throwing', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 300 }), cuts, (text, points) => {
        expect(parseChunks(cut(text, points))).toEqual(parseChunks([text]));
      }),
      { numRuns: 300 },
    );
  });

  it('gives back every frame a server wrote, with any line ending, behind an optional BOM, however the stream is cut', () => {
    fc.assert(
      fc.property(fc.array(frame, { maxLength: 6 }), lineEnding, fc.boolean(), cuts, (frames, ending, bom, points) => {
        const text = (bom ? '\uFEFF' : '') + frames.map((spec) => serialise(spec, ending)).join('');
        expect(parseChunks(cut(text, points))).toEqual(
          frames.map((spec) => ({ id: spec.id, event: spec.event ?? 'message', data: spec.data.join('\n') })),
        );
      }),
      { numRuns: 300 },
    );
  });

  it('never delivers a frame the stream cut off before its blank line', () => {
    fc.assert(
      fc.property(frame, lineEnding, cuts, (spec, ending, points) => {
        const text = serialise(spec, ending);
        const truncated = text.slice(0, text.length - ending.length);
        expect(parseChunks(cut(truncated, points))).toEqual([]);
      }),
      { numRuns: 200 },
    );
  });
});
