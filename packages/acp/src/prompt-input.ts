import { fileURLToPath } from 'node:url';
import type { ContentBlock } from '@agentclientprotocol/sdk';
import {
  AgentError,
  ControlName,
  ImageMediaType,
  inputPartPosition,
  type SubmittedInputPart,
  textInputLengthLimit,
} from '@tether/protocol';

/**
 * What a prompt asks for: a turn with input parts, one of Tether's controls (a slash command), or
 * `/model NAME`, which sets the model option (so the client hears of it as when it sets it itself).
 */
export type PromptRequestPlan =
  | {
      readonly kind: 'turn';
      readonly input: SubmittedInputPart[];
      /** The prompt block each input part came from (empty text blocks make none), and how many blocks there were. */
      readonly blocks: { readonly ofPart: readonly number[]; readonly count: number };
    }
  | { readonly kind: 'control'; readonly name: string; readonly argument?: string }
  | { readonly kind: 'model'; readonly model: string };

function unsupported(message: string): AgentError {
  return new AgentError({ code: 'capability_unsupported', message });
}

function imagePart(mimeType: string | null | undefined, data: string): SubmittedInputPart {
  const mediaType = ImageMediaType.safeParse(mimeType);
  if (!mediaType.success) {
    throw unsupported(`An image of type ${String(mimeType)} cannot be sent; use PNG, JPEG, GIF or WebP.`);
  }
  return { type: 'image', mediaType: mediaType.data, data };
}

/**
 * The resource's text inside its tags, so that nothing in it can end them early: a file that holds
 * `</resource>` (or a uri holding a quote) would otherwise let the rest of it read as the user's own
 * words. Only those few characters change.
 */
function wrappedResource(uri: string, text: string): string {
  const attribute = uri.replaceAll('&', '&amp;').replaceAll('"', '&quot;').replaceAll('<', '&lt;');
  const body = text.replace(/<(\/resource)/gi, '&lt;$1').replaceAll('@', mentionBreaker);
  return `<resource uri="${attribute}">\n${body}\n</resource>`;
}

/**
 * An "@" with a zero-width space before it: Claude Code reads "@path" in a prompt as a file to attach,
 * unasked and from anywhere it can read (~/.aws/credentials), and a resource's text is a file's content,
 * not the user's words. Read back as "@" (unwrappedResource).
 */
const mentionBreaker = '\u200b@';

const wrapped = /^<resource uri="([^"]*)">\n([\s\S]*)\n<\/resource>$/;

/**
 * An embedded resource back from the turn text wrappedResource made of it (a replay shows the client
 * the resource it sent, not the tags); null for any other text. A text holding "&lt;/resource" (or a
 * zero-width space before an "@") of its own reads back changed there: the wrapping cannot tell them apart.
 */
export function unwrappedResource(text: string): { readonly uri: string; readonly text: string } | null {
  const match = wrapped.exec(text);
  if (match === null || /<\/resource/i.test(match[2]!)) return null;
  const uri = match[1]!.replaceAll('&lt;', '<').replaceAll('&quot;', '"').replaceAll('&amp;', '&');
  return { uri, text: match[2]!.replaceAll(mentionBreaker, '@').replace(/&lt;(\/resource)/gi, '<$1') };
}

function resourcePart(block: Extract<ContentBlock, { type: 'resource' }>): SubmittedInputPart {
  const { resource } = block;
  if ('text' in resource) {
    // The model sees the resource's text with the name it came from, as Claude Code shows an attachment.
    return { type: 'text', text: wrappedResource(resource.uri, resource.text) };
  }
  if (resource.mimeType?.startsWith('image/')) return imagePart(resource.mimeType, resource.blob);
  throw unsupported(
    `The embedded resource ${resource.uri} is binary (${resource.mimeType ?? 'no type'}); only text and images can be sent.`,
  );
}

/** A file link's path on this machine; a link to another host, or a path no file can have, is refused. */
function localPathOf(uri: string): string {
  try {
    return fileURLToPath(uri);
  } catch (error) {
    throw new AgentError({
      code: 'invalid_command',
      message: `The file link ${uri} names no file on this machine (${(error as Error).message}); link a file in the workspace as file:///absolute/path.`,
      details: { reason: 'file_link_not_local' },
    });
  }
}

/** One content block as Tether input: a file link becomes a file part, any other link its name and address. */
export function inputPartOf(block: ContentBlock): SubmittedInputPart | null {
  switch (block.type) {
    case 'text':
      // Only whitespace says nothing either: a prompt of it is refused as empty, not run as nothing.
      return block.text.trim() === '' ? null : { type: 'text', text: block.text };
    case 'image':
      return imagePart(block.mimeType, block.data);
    case 'resource_link':
      if (block.uri.startsWith('file://')) return { type: 'file', path: localPathOf(block.uri) };
      return { type: 'text', text: `[${block.name}](${block.uri})` };
    case 'resource':
      return resourcePart(block);
    default:
      throw unsupported(`Prompt content of type ${block.type} cannot be sent; use text, images or resources.`);
  }
}

/** A prompt that is only `/name [argument]`, with name one of Tether's controls (`model` with a name: the option). */
function controlOf(blocks: readonly ContentBlock[]): PromptRequestPlan | null {
  const [first] = blocks;
  if (blocks.length !== 1 || first?.type !== 'text') return null;
  const match = /^\/([a-z][a-z0-9-]*)(?:\s+([\s\S]*))?$/.exec(first.text.trim());
  if (!match) return null;
  const name = ControlName.safeParse(match[1]);
  if (!name.success) return null;
  const argument = match[2]?.trim();
  if (name.data === 'model') return argument ? { kind: 'model', model: argument } : null;
  return { kind: 'control', name: name.data, ...(argument ? { argument } : {}) };
}

/** What a session/prompt asks Tether to do; unsupported content is refused whole before anything runs. */
export function planPrompt(blocks: readonly ContentBlock[]): PromptRequestPlan {
  const control = controlOf(blocks);
  if (control) return control;
  const input: SubmittedInputPart[] = [];
  const ofPart: number[] = [];
  for (const [index, block] of blocks.entries()) {
    const part = inputPartOf(block);
    if (part === null) continue;
    input.push(part);
    ofPart.push(index);
  }
  // Said in the client's terms: Tether's own refusal would describe its input format.
  const oversized = input.findIndex((part) => part.type === 'text' && part.text.length > textInputLengthLimit);
  if (oversized !== -1) {
    throw new AgentError({
      code: 'invalid_command',
      message: `Prompt block ${ofPart[oversized]! + 1} holds more than ${textInputLengthLimit.toLocaleString('en-US')} characters of text, more than a turn takes. Attach a large file as a link to it (resource_link) instead: the agent reads it itself.`,
      details: { reason: 'prompt_text_too_large' },
    });
  }
  if (input.length === 0) {
    throw new AgentError({
      code: 'invalid_command',
      message: 'The prompt is empty; send some text, an image or a resource.',
    });
  }
  return { kind: 'turn', input, blocks: { ofPart, count: blocks.length } };
}

/** The words of Tether's input format in its refusals, as ACP names the field: an image's type is its mimeType. */
const acpFieldNames: readonly (readonly [tetherWords: string, acpWords: string])[] = [
  ['with the media type in "mediaType"', 'with the type in "mimeType"'],
  ['Send mediaType "', 'Send mimeType "'],
];

/**
 * Tether's refusal of one input part (an image that is not one, a file link outside the workspace) in
 * the client's terms: the prompt block it came from ("Prompt block 3 of 3", and `details.index` that
 * block's), not the input part Tether made of it, which an empty text block before it would shift; and
 * an image's type as ACP names its field. Any other error is returned as it is.
 */
export function promptRefusalOf(
  error: AgentError,
  blocks: { readonly ofPart: readonly number[]; readonly count: number },
): AgentError {
  const index = error.details?.['index'];
  if (typeof index !== 'number' || blocks.ofPart[index] === undefined) return error;
  const block = blocks.ofPart[index];
  const part = `Input part ${inputPartPosition(index, blocks.ofPart.length)}`;
  if (!error.message.startsWith(part)) return error;
  const message = acpFieldNames.reduce(
    (text, [tetherWords, acpWords]) => text.replace(tetherWords, acpWords),
    `Prompt block ${inputPartPosition(block, blocks.count)}${error.message.slice(part.length)}`,
  );
  return new AgentError({ ...error.toObject(), message, details: { ...error.details, index: block } });
}
