import type { ImageMediaType } from '@tether/protocol';
import type { AgentProviderV1InputPart } from '@tether/provider-spec';

/** A Messages API content block as a user line carries it. */
export type ClaudeUserContentBlock =
  | { readonly type: 'text'; readonly text: string }
  | {
      readonly type: 'image';
      readonly source: { readonly type: 'base64'; readonly media_type: ImageMediaType; readonly data: string };
    };

/** A user line as every transport writes it (stream-json input), stamped with the turn's uuid. */
export interface ClaudeUserMessage {
  readonly type: 'user';
  readonly message: {
    readonly role: 'user';
    readonly content: string | readonly ClaudeUserContentBlock[];
  };
  readonly parent_tool_use_id: null;
  readonly uuid: string;
  /** Set on a line sent while a turn runs (a steer): next folds it next to a tool's result, else runs it right after. */
  readonly priority?: 'next';
}

/** Paths the CLI reads whole after an unquoted `@`: anything else is quoted. */
const plainMentionPath = /^[\w./-]*[\w/-]$/;

/**
 * A file reference as the CLI expects a mentioned file: `@path`, or `@"path"` for one with spaces or
 * other characters an unquoted mention would cut short. A path holding a `"` cannot be quoted, so it
 * goes unquoted (it works when it has no whitespace either). The CLI reads a leading `~` as the home
 * folder (`@"~/plan.txt"` attaches `$HOME/plan.txt`, outside the workspace), and an unquoted
 * mention's leading `"` as an opening quote (`@"/etc/x"` for a workspace folder named `"`: the file
 * `/etc/x`), so a workspace entry whose name starts with either is named through `./`.
 */
export function fileMention(workspacePath: string): string {
  const mentioned =
    workspacePath.startsWith('~') || workspacePath.startsWith('"') ? `./${workspacePath}` : workspacePath;
  if (plainMentionPath.test(mentioned) || mentioned.includes('"')) return `@${mentioned}`;
  return `@"${mentioned}"`;
}

/**
 * The user line for a turn's input, stamped with its uuid. Text and images keep their order, as
 * Messages API blocks; a lone text part stays a plain string, as before images existed. File parts
 * become @-mentions, all in one text block at the very end: the CLI (2.1.332) expands mentions in
 * the message's last content block only, and attaches each file as a synthetic Read ahead of the
 * prompt wherever the mention stood (docs/decisions/2026-12-01-file-parts-as-mentions.md).
 */
export function userMessage(input: readonly AgentProviderV1InputPart[], uuid: string): ClaudeUserMessage {
  const blocks: ClaudeUserContentBlock[] = [];
  const mentions: string[] = [];
  for (const part of input) {
    if (part.type === 'text') blocks.push({ type: 'text', text: part.text });
    else if (part.type === 'image')
      blocks.push({ type: 'image', source: { type: 'base64', media_type: part.mediaType, data: part.data } });
    else mentions.push(fileMention(part.workspacePath));
  }
  if (mentions.length > 0) blocks.push({ type: 'text', text: mentions.join(' ') });
  const only = blocks.length === 1 ? blocks[0] : undefined;
  const content = only?.type === 'text' ? only.text : blocks;
  return { type: 'user', message: { role: 'user', content }, parent_tool_use_id: null, uuid };
}
