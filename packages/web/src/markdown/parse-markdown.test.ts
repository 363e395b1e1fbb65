import { describe, expect, it } from 'vitest';
import { parseInline, parseMarkdown } from './parse-markdown.js';

describe('parseMarkdown', () => {
  it('splits paragraphs, headings, lists, quotes and fenced code', () => {
    const blocks = parseMarkdown('# Title\n\nFirst line\nsecond line\n\n- one\n- two\n\n1. a\n2. b\n\n> quoted\n\n```ts\nconst x = 1;\n```\nafter');
    expect(blocks.map((block) => block.type)).toEqual(['heading', 'paragraph', 'list', 'list', 'quote', 'code', 'paragraph']);
    expect(blocks[1]).toEqual({ type: 'paragraph', children: [{ type: 'text', text: 'First line\nsecond line' }] });
    expect(blocks[2]).toMatchObject({ ordered: false, items: [[{ text: 'one' }], [{ text: 'two' }]] });
    expect(blocks[3]).toMatchObject({ ordered: true });
    expect(blocks[5]).toEqual({ type: 'code', language: 'ts', text: 'const x = 1;' });
  });

  it('keeps a fence that is still open (text still streaming) as code to the end', () => {
    expect(parseMarkdown('Look:\n```\nline 1\nline 2')).toEqual([
      { type: 'paragraph', children: [{ type: 'text', text: 'Look:' }] },
      { type: 'code', language: '', text: 'line 1\nline 2' },
    ]);
  });

  it('leaves HTML as text: there is no HTML node at all', () => {
    const text = 'Hi <img src=x onerror=alert(1)> and <script>alert(2)</script>';
    expect(parseMarkdown(text)).toEqual([{ type: 'paragraph', children: [{ type: 'text', text }] }]);
  });
});

describe('parseInline', () => {
  it('reads code, strong, emphasis and links', () => {
    expect(parseInline('Use `npm ci`, **now**, *please* and _soon_.')).toEqual([
      { type: 'text', text: 'Use ' },
      { type: 'code', text: 'npm ci' },
      { type: 'text', text: ', ' },
      { type: 'strong', children: [{ type: 'text', text: 'now' }] },
      { type: 'text', text: ', ' },
      { type: 'emphasis', children: [{ type: 'text', text: 'please' }] },
      { type: 'text', text: ' and ' },
      { type: 'emphasis', children: [{ type: 'text', text: 'soon' }] },
      { type: 'text', text: '.' },
    ]);
  });

  it('keeps a link target as it was written, dangerous schemes included (they are only ever shown)', () => {
    expect(parseInline('[click](javascript:alert(1)) and [docs](https://example.com/a_(b))')).toEqual([
      { type: 'link', children: [{ type: 'text', text: 'click' }], target: 'javascript:alert(1)' },
      { type: 'text', text: ' and ' },
      { type: 'link', children: [{ type: 'text', text: 'docs' }], target: 'https://example.com/a_(b)' },
    ]);
  });

  it('leaves underscores inside words alone', () => {
    const text = 'window.__pwned=1 and snake_case_name and x.__y__z';
    expect(parseInline(text)).toEqual([{ type: 'text', text }]);
    expect(parseInline('__init__ is _fine_')).toEqual([
      { type: 'strong', children: [{ type: 'text', text: 'init' }] },
      { type: 'text', text: ' is ' },
      { type: 'emphasis', children: [{ type: 'text', text: 'fine' }] },
    ]);
  });

  it('treats unmatched markers as text', () => {
    expect(parseInline('2 * 3 = 6, a_b, `open, **half')).toEqual([{ type: 'text', text: '2 * 3 = 6, a_b, `open, **half' }]);
  });
});
