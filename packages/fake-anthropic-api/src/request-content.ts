import type { FakeAttachedFile, FakeUserBlock } from './types.js';

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The blocks of a user message's content, in order (a string content is one text block). */
export function readUserBlocks(content: unknown): FakeUserBlock[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (!Array.isArray(content)) return [];
  return (content as unknown[]).filter(isObject).map(readUserBlock);
}

function readUserBlock(block: Json): FakeUserBlock {
  if (block.type === 'text' && typeof block.text === 'string') return { type: 'text', text: block.text };
  const source = block.source;
  if (block.type === 'image' && isObject(source) && source.type === 'base64') {
    return {
      type: 'image',
      mediaType: typeof source.media_type === 'string' ? source.media_type : '',
      data: typeof source.data === 'string' ? source.data : '',
    };
  }
  return { type: 'other', blockType: typeof block.type === 'string' ? block.type : '' };
}

// How the claude CLI (2.1.332) attaches an @-mentioned file: a synthetic Read call, then its result, each
// in a <system-reminder> text of a user message ahead of the prompt.
const readCall = /Called the Read tool with the following input: (\{.*?\})\n<\/system-reminder>/s;
const readResult = /^<system-reminder>\nResult of calling the Read tool:\n(.*?)\n?<\/system-reminder>/s;

/** The files the CLI attached to a request as synthetic Reads (from @-mentions), in order, from every user message. */
export function readAttachedFiles(messages: unknown): FakeAttachedFile[] {
  if (!Array.isArray(messages)) return [];
  const texts = (messages as unknown[])
    .filter((message): message is Json => isObject(message) && message.role === 'user')
    .flatMap((message) => readUserBlocks(message.content))
    .flatMap((block) => (block.type === 'text' ? [block.text] : []));
  const attached: FakeAttachedFile[] = [];
  let pendingPath: string | undefined;
  for (const text of texts) {
    const call = readCall.exec(text);
    if (call) pendingPath = filePathOf(call[1]!);
    const result = readResult.exec(text);
    if (result && pendingPath !== undefined) {
      attached.push({ filePath: pendingPath, content: result[1]! });
      pendingPath = undefined;
    }
  }
  return attached;
}

function filePathOf(input: string): string | undefined {
  try {
    const parsed: unknown = JSON.parse(input);
    return isObject(parsed) && typeof parsed.file_path === 'string' ? parsed.file_path : undefined;
  } catch {
    return undefined;
  }
}
