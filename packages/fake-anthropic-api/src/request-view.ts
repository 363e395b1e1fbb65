import { readAttachedFiles, readUserBlocks } from './request-content.js';
import type { FakeRequestView, FakeToolResult, RecordedRequestKind } from './types.js';

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Builds the responder's view of a `/v1/messages` body. */
export function buildRequestView(body: unknown, headers: Record<string, string>): FakeRequestView {
  const record = isObject(body) ? body : {};
  const lastUser = findLastUserMessage(record.messages);
  const { text, toolResults } = readUserContent(lastUser?.content);
  return {
    body,
    model: typeof record.model === 'string' ? record.model : '',
    streaming: record.stream === true,
    lastUserText: text,
    lastUserBlocks: readUserBlocks(lastUser?.content),
    attachedFiles: readAttachedFiles(record.messages),
    toolResults,
    isCompaction: toolResults.length === 0 && isCompactionPrompt(text),
    headers,
    sessionId: headers['x-claude-code-session-id'],
    isSubagent: systemText(record.system).includes('cc_is_subagent=true'),
  };
}

function systemText(system: unknown): string {
  if (typeof system === 'string') return system;
  if (!Array.isArray(system)) return '';
  return (system as unknown[])
    .map((block) => (isObject(block) && typeof block.text === 'string' ? block.text : ''))
    .join('\n');
}

/** The tiny non-streaming `max_tokens: 1` probe the CLI sends after `set_model` to a full model name. */
export function isProbe(body: unknown): boolean {
  return isObject(body) && body.stream !== true && body.max_tokens === 1;
}

/** Classifies a `POST /v1/messages` request. */
export function classifyMessagesRequest(body: unknown, view: FakeRequestView): RecordedRequestKind {
  if (isProbe(body)) return 'probe';
  if (view.isCompaction) return 'compaction';
  return view.streaming ? 'turn' : 'non_streaming';
}

/**
 * The CLI's compaction prompt (2.1.332: "Your task is to create a detailed summary of the conversation so far…",
 * ending "Respond with plain text only — an <analysis> block followed by a <summary> block.") mentions both tags.
 */
export function isCompactionPrompt(text: string): boolean {
  return text.includes('<analysis>') && text.includes('<summary>');
}

function findLastUserMessage(messages: unknown): Json | undefined {
  if (!Array.isArray(messages)) return undefined;
  for (let i = messages.length - 1; i >= 0; i--) {
    const message: unknown = messages[i];
    if (isObject(message) && message.role === 'user') return message;
  }
  return undefined;
}

function readUserContent(content: unknown): { text: string; toolResults: FakeToolResult[] } {
  if (typeof content === 'string') return { text: content, toolResults: [] };
  if (!Array.isArray(content)) return { text: '', toolResults: [] };
  const texts: string[] = [];
  const toolResults: FakeToolResult[] = [];
  for (const block of content as unknown[]) {
    if (!isObject(block)) continue;
    if (block.type === 'text' && typeof block.text === 'string') texts.push(block.text);
    if (block.type === 'tool_result') {
      toolResults.push({
        toolUseId: typeof block.tool_use_id === 'string' ? block.tool_use_id : '',
        content: readToolResultContent(block.content),
        isError: block.is_error === true,
      });
    }
  }
  return { text: texts.join('\n'), toolResults };
}

function readToolResultContent(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return (content as unknown[])
    .filter((block): block is Json => isObject(block) && block.type === 'text' && typeof block.text === 'string')
    .map((block) => block.text as string)
    .join('\n');
}
