import { describe, expect, it } from 'vitest';
import { type DecodedLine, LineDecoder } from './line-decoder.js';

function decodeAll(chunks: (string | Buffer)[], maxLineBytes?: number): DecodedLine[] {
  const decoder = new LineDecoder(maxLineBytes === undefined ? {} : { maxLineBytes });
  const lines: DecodedLine[] = [];
  for (const chunk of chunks) decoder.push(chunk, (line) => lines.push(line));
  decoder.end((line) => lines.push(line));
  return lines;
}

describe('LineDecoder', () => {
  it('joins partial lines across chunks and skips blank lines', () => {
    expect(decodeAll(['{"a":', '1}\n\n\r\n{"b":2}\r\n', '{"c":3}'])).toEqual([
      { kind: 'json', value: { a: 1 } },
      { kind: 'json', value: { b: 2 } },
      { kind: 'json', value: { c: 3 } },
    ]);
  });

  it('keeps multi-byte characters intact when a chunk splits them', () => {
    const bytes = Buffer.from('{"t":"héllo ✓"}\n', 'utf8');
    const split = bytes.indexOf(0xc3) + 1;
    expect(decodeAll([bytes.subarray(0, split), bytes.subarray(split)])).toEqual([
      { kind: 'json', value: { t: 'héllo ✓' } },
    ]);
  });

  it('strips ANSI junk around a JSON line and reports lines that are not JSON', () => {
    expect(decodeAll(['\u001b[2K\u001b[1G{"a":1}\n', 'Loading...\n'])).toEqual([
      { kind: 'json', value: { a: 1 } },
      { kind: 'junk', length: 10 },
    ]);
  });

  it('drops a line over the bound without buffering it, and carries on', () => {
    const lines = decodeAll(['{"big":"', 'x'.repeat(50), 'y'.repeat(50), '"}\n{"ok":true}\n'], 64);
    expect(lines).toEqual([
      { kind: 'oversized', length: 110 },
      { kind: 'json', value: { ok: true } },
    ]);
  });
});
