import { describe, expect, it } from 'vitest';
import { splitIntoPieces } from './split-into-pieces.js';

describe('splitIntoPieces', () => {
  it('cuts before a top-level block that follows a blank line', () => {
    expect(splitIntoPieces('# Title\n\nFirst line\nsecond line\n\n- one\n- two\n\n| a |\n|---|\n| 1 |', 0)).toEqual([
      '# Title\n',
      'First line\nsecond line\n',
      '- one\n- two\n',
      '| a |\n|---|\n| 1 |',
    ]);
  });

  it('never cuts inside fenced code, closed or still streaming', () => {
    const closed = '```ts\nconst a = 1;\n\nconst b = 2;\n```';
    expect(splitIntoPieces(`${closed}\n\nafter`, 0)).toEqual([`${closed}\n`, 'after']);
    expect(splitIntoPieces('~~~~\n\n```\n\nstill code\n~~~~\n\nafter', 0)).toEqual([
      '~~~~\n\n```\n\nstill code\n~~~~\n',
      'after',
    ]);
    expect(splitIntoPieces('Look:\n```\nline 1\n\nline 2', 0)).toEqual(['Look:\n```\nline 1\n\nline 2']);
  });

  it('keeps indented lines with the list item they continue', () => {
    const list = '1. Install:\n\n   ```sh\n   npm ci\n\n   npm test\n   ```\n\n2. Run it.';
    expect(splitIntoPieces(list, 0)).toEqual([
      '1. Install:\n\n   ```sh\n   npm ci\n\n   npm test\n   ```\n',
      '2. Run it.',
    ]);
  });

  it('makes each piece but the last at least the minimum long, and keeps earlier pieces as the text grows', () => {
    const text = 'one\n\ntwo\n\nthree\n\nfour\n\nfive';
    expect(splitIntoPieces(text, 9)).toEqual(['one\n\ntwo\n', 'three\n\nfour\n', 'five']);
    expect(splitIntoPieces(`${text} and more\n\nsix`, 9)).toEqual([
      'one\n\ntwo\n',
      'three\n\nfour\n',
      'five and more\n',
      'six',
    ]);
  });

  it('gives back the text unchanged when joined', () => {
    const text = 'a\n\n\nb\n\n  c\n\n```\n\n```\nd\n';
    expect(splitIntoPieces(text, 0).join('\n')).toBe(text);
  });
});
