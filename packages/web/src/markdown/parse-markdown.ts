/**
 * A small, safe subset of Markdown for model-authored text. It produces a tree of plain strings
 * that React renders as text nodes: nothing here can become HTML, whatever the model wrote. Links
 * keep their target as text so a reader sees where one would lead; none is ever clickable.
 */

export type Inline =
  | { readonly type: 'text'; readonly text: string }
  | { readonly type: 'code'; readonly text: string }
  | { readonly type: 'strong'; readonly children: readonly Inline[] }
  | { readonly type: 'emphasis'; readonly children: readonly Inline[] }
  | { readonly type: 'link'; readonly children: readonly Inline[]; readonly target: string };

export type Block =
  | { readonly type: 'paragraph'; readonly children: readonly Inline[] }
  | { readonly type: 'heading'; readonly level: number; readonly children: readonly Inline[] }
  | { readonly type: 'code'; readonly language: string; readonly text: string }
  | { readonly type: 'list'; readonly ordered: boolean; readonly items: readonly (readonly Inline[])[] }
  | { readonly type: 'quote'; readonly children: readonly Inline[] };

const fence = /^ {0,3}(`{3,}|~{3,})\s*([\w+-]*)/;
const heading = /^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
const bulletItem = /^ {0,3}[-*+]\s+(.*)$/;
const orderedItem = /^ {0,3}\d{1,9}[.)]\s+(.*)$/;
const quoteLine = /^ {0,3}>\s?(.*)$/;

/** Splits text into blocks. A fence still open at the end (text still streaming) holds the rest. */
export function parseMarkdown(source: string): Block[] {
  const lines = source.replace(/\r\n?/g, '\n').split('\n');
  const blocks: Block[] = [];
  let paragraph: string[] = [];
  const flushParagraph = () => {
    if (paragraph.length > 0) blocks.push({ type: 'paragraph', children: parseInline(paragraph.join('\n')) });
    paragraph = [];
  };
  for (let index = 0; index < lines.length; ) {
    const line = lines[index]!;
    const opening = fence.exec(line);
    if (opening) {
      flushParagraph();
      const marker = opening[1]!;
      const body: string[] = [];
      index += 1;
      while (index < lines.length && !lines[index]!.trimStart().startsWith(marker)) body.push(lines[index++]!);
      index += 1;
      blocks.push({ type: 'code', language: opening[2] ?? '', text: body.join('\n') });
      continue;
    }
    if (line.trim() === '') {
      flushParagraph();
      index += 1;
      continue;
    }
    const title = heading.exec(line);
    if (title) {
      flushParagraph();
      blocks.push({ type: 'heading', level: title[1]!.length, children: parseInline(title[2]!) });
      index += 1;
      continue;
    }
    const list = bulletItem.test(line) ? bulletItem : orderedItem.test(line) ? orderedItem : null;
    if (list) {
      flushParagraph();
      const items: Inline[][] = [];
      while (index < lines.length && list.test(lines[index]!)) items.push(parseInline(list.exec(lines[index++]!)![1]!));
      blocks.push({ type: 'list', ordered: list === orderedItem, items });
      continue;
    }
    if (quoteLine.test(line)) {
      flushParagraph();
      const quoted: string[] = [];
      while (index < lines.length && quoteLine.test(lines[index]!)) quoted.push(quoteLine.exec(lines[index++]!)![1]!);
      blocks.push({ type: 'quote', children: parseInline(quoted.join('\n')) });
      continue;
    }
    paragraph.push(line);
    index += 1;
  }
  flushParagraph();
  return blocks;
}

const wordCharacter = /[\p{L}\p{N}]/u;

function isWordCharacter(character: string | undefined): boolean {
  return character !== undefined && wordCharacter.test(character);
}

/**
 * Where the closing `marker` of a span opened at `from` is, or -1 (then the marker is plain text).
 * Underscores never close inside a word (snake_case, __dunder__ names stay text).
 */
function closingIndex(text: string, marker: string, from: number): number {
  for (let end = text.indexOf(marker, from); end !== -1; end = text.indexOf(marker, end + 1)) {
    if (end === from) continue;
    // Part of a longer run of the same character ("___", or "*" inside "**"): not this marker.
    if (text[end - 1] === marker[0] || text[end + marker.length] === marker[0]) continue;
    if (marker.startsWith('_') && isWordCharacter(text[end + marker.length])) continue;
    return end;
  }
  return -1;
}

/** A marker opens only as a whole run of its character, and underscores only at the start of a word. */
function canOpen(text: string, index: number, marker: string): boolean {
  if (text[index - 1] === marker[0] || text[index + marker.length] === marker[0]) return false;
  return !marker.startsWith('_') || !isWordCharacter(text[index - 1]);
}

/** Inline spans: `code`, **strong**, *emphasis* / _emphasis_, [text](target). Everything else is text. */
export function parseInline(text: string): Inline[] {
  const result: Inline[] = [];
  let plain = '';
  const pushText = () => {
    if (plain !== '') result.push({ type: 'text', text: plain });
    plain = '';
  };
  for (let index = 0; index < text.length; ) {
    const rest = text.slice(index);
    if (rest.startsWith('`')) {
      const ticks = /^`+/.exec(rest)![0];
      const end = closingIndex(text, ticks, index + ticks.length);
      if (end !== -1) {
        pushText();
        result.push({ type: 'code', text: text.slice(index + ticks.length, end) });
        index = end + ticks.length;
        continue;
      }
    }
    const strongMarker = rest.startsWith('**') ? '**' : rest.startsWith('__') ? '__' : null;
    if (strongMarker && canOpen(text, index, strongMarker)) {
      const end = closingIndex(text, strongMarker, index + 2);
      if (end !== -1) {
        pushText();
        result.push({ type: 'strong', children: parseInline(text.slice(index + 2, end)) });
        index = end + 2;
        continue;
      }
    }
    if ((rest.startsWith('*') || rest.startsWith('_')) && !/^[*_]\s/.test(rest) && canOpen(text, index, rest[0]!)) {
      const end = closingIndex(text, rest[0]!, index + 1);
      if (end !== -1 && !/\s/.test(text[end - 1]!)) {
        pushText();
        result.push({ type: 'emphasis', children: parseInline(text.slice(index + 1, end)) });
        index = end + 1;
        continue;
      }
    }
    if (rest.startsWith('[')) {
      const link = /^\[([^\]\n]+)\]\(\s*<?([^()\s<>]*(?:\([^()\s]*\)[^()\s<>]*)*)>?(?:\s+"[^"]*")?\s*\)/.exec(rest);
      if (link) {
        pushText();
        result.push({ type: 'link', children: parseInline(link[1]!), target: link[2]! });
        index += link[0].length;
        continue;
      }
    }
    plain += text[index];
    index += 1;
  }
  pushText();
  return result;
}
