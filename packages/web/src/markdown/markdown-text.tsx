import { memo, useDeferredValue, useMemo } from 'react';
import Markdown, { type Components, type ExtraProps, type Options } from 'react-markdown';
import remarkGfm from 'remark-gfm';
import { useCodeHighlighter } from './code-highlighter.js';
import { markdownPieces } from './split-into-pieces.js';

/*
 * Model output through react-markdown (CommonMark + GFM tables, task lists, strikethrough) with
 * highlight.js classes on fenced code (code-highlighter.ts). It builds React elements, never an HTML string: raw HTML in
 * the text becomes text (no rehype-raw), so whatever HTML the model writes shows up as the
 * characters it is. No element gets an href or a src: links and images show their target as text.
 */

type HastElement = NonNullable<ExtraProps['node']>;
type HastChild = HastElement['children'][number];

function plainText(node: HastChild | HastElement | undefined): string {
  if (node === undefined) return '';
  if (node.type === 'text') return node.value;
  return node.type === 'element' ? node.children.map(plainText).join('') : '';
}

/** The language a fence named (`language-ts` on its code element), for the data attribute. */
function fenceLanguage(node: HastElement | undefined): string | undefined {
  const code = node?.children.find((child) => child.type === 'element' && child.tagName === 'code');
  const classes = code?.type === 'element' ? code.properties.className : undefined;
  const language = Array.isArray(classes) ? classes.find((name) => String(name).startsWith('language-')) : undefined;
  return language === undefined ? undefined : String(language).slice('language-'.length);
}

function heading(level: number): Components['h1'] {
  // Headings inside an answer stay below the page's own heading levels.
  return ({ children }) => <p className={`markdown-heading markdown-heading-${level}`}>{children}</p>;
}

const components: Components = {
  a({ node, href, children }) {
    // GFM footnote references and back-references point inside the answer: their text is enough.
    if (node?.properties.dataFootnoteRef !== undefined || node?.properties.dataFootnoteBackref !== undefined)
      return <span>{children}</span>;
    const text = plainText(node);
    const target = href ?? '';
    // A bare URL (GFM autolink) already shows its whole target.
    if (target === text || target === `mailto:${text}`) return <span className="markdown-link">{children}</span>;
    // Shown, never followed: the reader sees the real target and can copy it deliberately.
    return (
      <span className="markdown-link">
        {children}
        <span className="markdown-link-target"> ({target})</span>
      </span>
    );
  },
  img({ src, alt }) {
    // Never loaded: a model-written image URL is shown like a link, as it was written.
    return (
      <span className="markdown-link">
        !{alt}
        <span className="markdown-link-target"> ({typeof src === 'string' ? src : ''})</span>
      </span>
    );
  },
  h1: heading(1),
  h2: heading(2),
  h3: heading(3),
  h4: heading(4),
  h5: heading(5),
  h6: heading(6),
  pre({ node, children }) {
    return (
      <pre className="markdown-code" data-language={fenceLanguage(node)}>
        {children}
      </pre>
    );
  },
  table({ children }) {
    // Scrolls sideways on its own rather than widening the page on a phone.
    return (
      <div className="markdown-table">
        <table>{children}</table>
      </div>
    );
  },
};

const remarkPlugins: Options['remarkPlugins'] = [remarkGfm];
/** Targets are only ever printed as text, so they stay exactly as written (javascript: included). */
const keepUrl = (url: string): string => url;

type RehypePlugins = Options['rehypePlugins'];
/** For code still streaming: coloured once its fence closes. */
const plainPlugins: RehypePlugins = [];
/**
 * Characters per separately rendered piece: each react-markdown render has a fixed cost (a new
 * processor), so pieces are not single paragraphs; a streamed delta re-parses at most about this much.
 */
const pieceLength = 1500;

/** One top-level piece of an answer, rendered again only when its own text changes. */
const MarkdownPiece = memo(function MarkdownPiece({
  text,
  rehypePlugins,
}: {
  readonly text: string;
  readonly rehypePlugins: RehypePlugins;
}) {
  return (
    <Markdown
      remarkPlugins={remarkPlugins}
      rehypePlugins={rehypePlugins}
      components={components}
      urlTransform={keepUrl}
    >
      {text}
    </Markdown>
  );
});

/**
 * Markdown as safe React elements. While an answer streams, only its last piece is parsed again for
 * each delta (splitIntoPieces; the finished ones keep their rendering), and a render for an older delta
 * is dropped when a newer one arrives (useDeferredValue).
 */
export const MarkdownText = memo(function MarkdownText({ text }: { readonly text: string }) {
  const shown = useDeferredValue(text);
  const rehypePlugins = useCodeHighlighter(shown);
  const { pieces, endsInOpenFence } = useMemo(() => markdownPieces(shown, pieceLength), [shown]);
  return (
    <div className="markdown">
      {pieces.map((piece, index) => (
        <MarkdownPiece
          // biome-ignore lint/suspicious/noArrayIndexKey: a piece is its position (only the last one grows; none moves)
          key={index}
          text={piece}
          rehypePlugins={endsInOpenFence && index === pieces.length - 1 ? plainPlugins : rehypePlugins}
        />
      ))}
    </div>
  );
});
