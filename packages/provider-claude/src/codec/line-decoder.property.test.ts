import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type DecodedLine, LineDecoder } from './line-decoder.js';

// Chunk boundaries are the pipe's choice, not the agent's: whatever bytes arrive, cut wherever,
// the decoder must hand on the same lines as for the whole stream, and never throw.

function decodeChunks(chunks: readonly Buffer[], maxLineBytes?: number): DecodedLine[] {
  const decoder = new LineDecoder(maxLineBytes === undefined ? {} : { maxLineBytes });
  const lines: DecodedLine[] = [];
  for (const chunk of chunks) decoder.push(chunk, (line) => lines.push(line));
  decoder.end((line) => lines.push(line));
  return lines;
}

function cut(bytes: Buffer, cuts: readonly number[]): Buffer[] {
  const points = [0, ...cuts.map((point) => point % (bytes.length + 1))].sort((left, right) => left - right);
  return points.map((point, index) => bytes.subarray(point, points[index + 1]));
}

const cuts = fc.array(fc.nat(), { maxLength: 12 });

/** What a CLI's stdout may hold: JSON lines (some behind terminal escapes), junk that is no JSON, blank lines. */
const stdoutLine = fc.oneof(
  fc.jsonValue().map((value) => ({ text: JSON.stringify(value), value: value as unknown })),
  fc.jsonValue().map((value) => ({ text: `\u001b[2K\u001b[1G${JSON.stringify(value)}`, value: value as unknown })),
  fc.string({ unit: 'grapheme' }).map((text) => ({ text: `Loading ${text.replaceAll('\n', ' ')}`, value: undefined })),
  fc.constant({ text: '', value: undefined }),
);

describe('LineDecoder (property-based)', () => {
  it('decodes arbitrary bytes cut at arbitrary points exactly as the unsplit stream, without throwing', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 400 }),
        cuts,
        fc.option(fc.integer({ min: 1, max: 64 }), { nil: undefined }),
        (bytes, points, bound) => {
          const whole = Buffer.from(bytes);
          expect(decodeChunks(cut(whole, points), bound)).toEqual(decodeChunks([whole], bound));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('hands on every JSON line and reports each junk line, between blank lines and terminal escapes, whatever the chunking', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(stdoutLine, fc.constantFrom('\n', '\r\n')), { maxLength: 12 }),
        cuts,
        (lines, points) => {
          const bytes = Buffer.from(lines.map(([line, ending]) => line.text + ending).join(''), 'utf8');
          const expected = lines.flatMap(([line, ending]): DecodedLine[] => {
            if (line.text === '') return [];
            if (line.value === undefined) return [{ kind: 'junk', length: line.text.length + ending.length - 1 }];
            return [{ kind: 'json', value: JSON.parse(JSON.stringify(line.value)) as unknown }];
          });
          expect(decodeChunks(cut(bytes, points))).toEqual(expected);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('reports a line over the bound as oversized with its full length and keeps the lines around it, whatever the chunking', () => {
    fc.assert(
      fc.property(fc.integer({ min: 12, max: 40 }), fc.integer({ min: 1, max: 200 }), cuts, (bound, excess, points) => {
        const long = `{"x":"${'y'.repeat(bound + excess)}"}`;
        const bytes = Buffer.from(`{"before":1}\n${long}\n{"after":2}`, 'utf8');
        expect(decodeChunks(cut(bytes, points), bound)).toEqual([
          { kind: 'json', value: { before: 1 } },
          { kind: 'oversized', length: long.length },
          { kind: 'json', value: { after: 2 } },
        ]);
      }),
      { numRuns: 200 },
    );
  });
});
