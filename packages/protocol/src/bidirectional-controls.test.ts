import { describe, expect, it } from 'vitest';
import { writeOutBidirectionalControls } from './bidirectional-controls.js';

describe('writeOutBidirectionalControls', () => {
  it('writes out the overrides, isolates and marks, and leaves other text alone', () => {
    expect(writeOutBidirectionalControls('rm -rf \u202ebuild\u202c now')).toBe('rm -rf <U+202E>build<U+202C> now');
    expect(writeOutBidirectionalControls('a\u2067b\u2069')).toBe('a<U+2067>b<U+2069>');
    expect(writeOutBidirectionalControls('x\u200fy\u200ez\u061c')).toBe('x<U+200F>y<U+200E>z<U+61C>');
    expect(writeOutBidirectionalControls('plain text, שלום, 😀')).toBe('plain text, שלום, 😀');
  });
});
