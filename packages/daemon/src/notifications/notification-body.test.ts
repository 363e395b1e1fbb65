import { describe, expect, it } from 'vitest';
import { boundedText } from './notification-body.js';

describe('boundedText: model text as one short line a receiver can show', () => {
  it('writes bidirectional controls out, so a path reads in its own order', () => {
    expect(boundedText('List files in \u202etxt.exe', 200)).toBe('List files in <U+202E>txt.exe');
  });

  it('cuts on a whole character: an emoji at the limit is kept whole or left out, never halved', () => {
    const cut = boundedText(`${'a'.repeat(198)}😀bcd`, 200);
    expect(cut).toBe(`${'a'.repeat(198)}😀…`);
    expect(() => encodeURIComponent(cut)).not.toThrow();
    expect(boundedText(`${'a'.repeat(199)}😀bcd`, 200)).toBe(`${'a'.repeat(199)}…`);
  });

  it('drops control characters and collapses whitespace', () => {
    expect(boundedText('one\u0007 two\n\n three\u009b', 200)).toBe('one two three');
  });
});
