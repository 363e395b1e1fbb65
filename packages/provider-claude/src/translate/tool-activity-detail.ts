import { toolActivityLimits } from '@tether/protocol';
import { splitText } from './split-text.js';

/** What run.tool_activity (invoked) carries of a tool_use block's input. */
export type InputDetail = { input: Record<string, unknown> } | { inputOmitted: true } | Record<string, never>;

/** What run.tool_activity (succeeded / failed) carries of a tool_result block's content. */
export type OutputDetail = { output: string; outputTruncated?: true } | Record<string, never>;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The tool's input as the model gave it, when its JSON fits toolActivityLimits.inputBytes. A bigger
 * one (a whole file to write) is only marked omitted: the event log keeps every event, and the host
 * can still see the call's name and result. An input that is no object says nothing.
 */
export function inputDetail(input: unknown): InputDetail {
  if (!isRecord(input)) return {};
  if (Buffer.byteLength(JSON.stringify(input), 'utf8') > toolActivityLimits.inputBytes) return { inputOmitted: true };
  return { input };
}

/**
 * The text the tool returned to the model: a string content, or the text blocks of an array content
 * joined with newlines (images and other blocks are not text). Cut at
 * toolActivityLimits.outputCharacters, never inside a surrogate pair. Nothing when there is no text.
 */
export function outputDetail(content: unknown): OutputDetail {
  let text: string;
  if (typeof content === 'string') text = content;
  else if (Array.isArray(content)) {
    const texts = content.flatMap((block) =>
      isRecord(block) && block.type === 'text' && typeof block.text === 'string' ? [block.text] : [],
    );
    if (texts.length === 0) return {};
    text = texts.join('\n');
  } else return {};
  const [first = ''] = splitText(text, toolActivityLimits.outputCharacters);
  return first.length < text.length ? { output: first, outputTruncated: true } : { output: text };
}
