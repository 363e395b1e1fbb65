import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { loadCodeHighlighter } from './code-highlighter.js';
import { MarkdownText } from './markdown-text.js';

const html = (text: string): string => renderToStaticMarkup(createElement(MarkdownText, { text }));

describe('MarkdownText', () => {
  it('renders paragraphs (line breaks kept), headings below the page headings, lists, quotes and fenced code', () => {
    const rendered = html(
      '# Title\n\nFirst line\nsecond line\n\n- one\n- two\n\n1. a\n2. b\n\n> quoted\n\n```ts\nconst x = 1;\n```\nafter',
    );
    expect(rendered).toContain('<p class="markdown-heading markdown-heading-1">Title</p>');
    expect(rendered).not.toMatch(/<h[1-6]/);
    expect(rendered).toContain('<p>First line\nsecond line</p>');
    expect(rendered).toContain('<ul>\n<li>one</li>\n<li>two</li>\n</ul>');
    expect(rendered).toContain('<ol>\n<li>a</li>\n<li>b</li>\n</ol>');
    expect(rendered).toContain('<blockquote>\n<p>quoted</p>\n</blockquote>');
    expect(rendered).toContain(
      '<pre class="markdown-code" data-language="ts"><code class="language-ts">const x = 1;\n</code></pre>',
    );
    expect(rendered).toContain('<p>after</p>');
  });

  it('keeps a fence that is still open (text still streaming) as code to the end', () => {
    expect(html('Look:\n```\nline 1\nline 2')).toBe(
      '<div class="markdown"><p>Look:</p>\n<pre class="markdown-code"><code>line 1\nline 2\n</code></pre></div>',
    );
  });

  it('renders GFM tables (in a box that scrolls sideways), strikethrough and task lists', () => {
    const rendered = html('| tool | calls |\n|:--|--:|\n| Bash | 3 |\n\n~~gone~~\n\n- [x] done');
    expect(rendered).toContain(
      '<div class="markdown-table"><table><thead><tr><th style="text-align:left">tool</th><th style="text-align:right">calls</th></tr></thead>',
    );
    expect(rendered).toContain(
      '<tbody><tr><td style="text-align:left">Bash</td><td style="text-align:right">3</td></tr></tbody></table></div>',
    );
    expect(rendered).toContain('<del>gone</del>');
    expect(rendered).toContain('<input type="checkbox" disabled="" checked=""/> done');
  });

  it('colours fenced code that names a language once the highlighter has loaded, and leaves the rest plain', async () => {
    expect(html('```ts\nconst x = 1;\n```')).not.toContain('hljs');
    await loadCodeHighlighter();
    expect(html('```ts\nconst x = 1; // one\n```')).toContain(
      '<code class="hljs language-ts"><span class="hljs-keyword">const</span> x = <span class="hljs-number">1</span>; <span class="hljs-comment">// one</span>\n</code>',
    );
    expect(html('```\nconst x = 1;\n```')).toContain('<code>const x = 1;\n</code>');
    // A language highlight.js does not know stays plain text rather than failing.
    expect(html('```no-such-language\n<b>x</b>\n```')).toContain(
      '<code class="hljs language-no-such-language">&lt;b&gt;x&lt;/b&gt;\n</code>',
    );
    // Still streaming (its fence not closed yet): plain, coloured once whole rather than for every delta.
    expect(html('Here:\n\n```ts\nconst x = 1;')).toContain('<code class="language-ts">const x = 1;\n</code>');
    expect(html('Here:\n\n```ts\nconst x = 1;\n```')).toContain('hljs-keyword');
  });

  it('leaves HTML as the characters it is: no element, no attribute comes from it', () => {
    const rendered = html(
      'Hi <img src=x onerror=alert(1)> and <script>alert(2)</script> <iframe src="https://example.com"></iframe>\n\n<div onclick="alert(3)">\nblock *html*\n</div>',
    );
    expect(rendered).toContain(
      'Hi &lt;img src=x onerror=alert(1)&gt; and &lt;script&gt;alert(2)&lt;/script&gt; &lt;iframe src=&quot;https://example.com&quot;&gt;&lt;/iframe&gt;',
    );
    expect(rendered).toContain('&lt;div onclick=&quot;alert(3)&quot;&gt;\nblock *html*\n&lt;/div&gt;');
    expect(rendered).not.toMatch(/<(img|script|iframe|div onclick)/);
  });

  it('shows links and images with their target as written, dangerous schemes included, and never links or loads them', () => {
    const rendered = html(
      '[click](javascript:alert(1)) and [docs](https://example.com/a_(b)) and ![logo](https://example.com/x.png "t") and <https://example.com/auto>, https://example.com/bare, a@example.com',
    );
    expect(rendered).toContain(
      '<span class="markdown-link">click<span class="markdown-link-target"> (javascript:alert(1))</span></span>',
    );
    expect(rendered).toContain(
      '<span class="markdown-link">docs<span class="markdown-link-target"> (https://example.com/a_(b))</span></span>',
    );
    expect(rendered).toContain(
      '<span class="markdown-link">!logo<span class="markdown-link-target"> (https://example.com/x.png)</span></span>',
    );
    // A bare URL already shows its whole target: it is not repeated.
    expect(rendered).toContain('<span class="markdown-link">https://example.com/auto</span>');
    expect(rendered).toContain('<span class="markdown-link">https://example.com/bare</span>');
    expect(rendered).toContain('<span class="markdown-link">a@example.com</span>');
    expect(rendered).not.toMatch(/<a[\s>]|href=|src=/);
  });

  it('renders a long answer piece by piece, every block once and in order', () => {
    const paragraph = 'word '.repeat(400).trim();
    const rendered = html(
      `${paragraph}\n\n1. first\n\n2. second\n\n\`\`\`\n${paragraph}\n\n${paragraph}\n\`\`\`\n\nend`,
    );
    expect(rendered).toBe(
      `<div class="markdown"><p>${paragraph}</p><ol>\n<li>\n<p>first</p>\n</li>\n<li>\n<p>second</p>\n</li>\n</ol>\n<pre class="markdown-code"><code>${paragraph}\n\n${paragraph}\n</code></pre><p>end</p></div>`,
    );
  });

  it('leaves underscores inside words alone and treats unmatched markers as text', () => {
    expect(html('window.__pwned=1 and snake_case_name and x.__y__z')).toBe(
      '<div class="markdown"><p>window.__pwned=1 and snake_case_name and x.__y__z</p></div>',
    );
    expect(html('__init__ is _fine_')).toBe(
      '<div class="markdown"><p><strong>init</strong> is <em>fine</em></p></div>',
    );
    expect(html('2 * 3 = 6, a_b, `open, **half')).toBe(
      '<div class="markdown"><p>2 * 3 = 6, a_b, `open, **half</p></div>',
    );
  });
});
