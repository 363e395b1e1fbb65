import { type ReactNode, memo, useMemo } from 'react';
import { type Block, type Inline, parseMarkdown } from './parse-markdown.js';

/*
 * Model output rendered as React text nodes only: no dangerouslySetInnerHTML, no href, no src.
 * Whatever HTML the model writes shows up as the characters it is.
 */

function renderInline(inline: readonly Inline[]): ReactNode[] {
  return inline.map((node, index) => {
    switch (node.type) {
      case 'text':
        return node.text;
      case 'code':
        return <code key={index}>{node.text}</code>;
      case 'strong':
        return <strong key={index}>{renderInline(node.children)}</strong>;
      case 'emphasis':
        return <em key={index}>{renderInline(node.children)}</em>;
      case 'link':
        // Shown, never followed: the reader sees the real target and can copy it deliberately.
        return (
          <span key={index} className="markdown-link">
            {renderInline(node.children)}
            <span className="markdown-link-target"> ({node.target})</span>
          </span>
        );
    }
  });
}

function renderBlock(block: Block, index: number): ReactNode {
  switch (block.type) {
    case 'paragraph':
      return <p key={index}>{renderInline(block.children)}</p>;
    case 'heading':
      // Headings inside an answer stay below the page's own heading levels.
      return <p key={index} className={`markdown-heading markdown-heading-${block.level}`}>{renderInline(block.children)}</p>;
    case 'code':
      return (
        <pre key={index} className="markdown-code" data-language={block.language || undefined}>
          <code>{block.text}</code>
        </pre>
      );
    case 'list': {
      const items = block.items.map((item, itemIndex) => <li key={itemIndex}>{renderInline(item)}</li>);
      return block.ordered ? <ol key={index}>{items}</ol> : <ul key={index}>{items}</ul>;
    }
    case 'quote':
      return <blockquote key={index}>{renderInline(block.children)}</blockquote>;
  }
}

/** Markdown as safe text. Re-parsed only when the text changes (each streamed delta). */
export const MarkdownText = memo(function MarkdownText({ text }: { readonly text: string }) {
  const blocks = useMemo(() => parseMarkdown(text), [text]);
  return <div className="markdown">{blocks.map(renderBlock)}</div>;
});
