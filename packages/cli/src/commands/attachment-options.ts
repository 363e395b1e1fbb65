import { resolveGivenPath } from '@tether/store-sqlite';
import type { SubmittedInputPart } from '@tether/protocol';
import type { CliContext } from '../cli-context.js';

export const attachmentHelp = `  --image PATH       attach an image (PNG, JPEG, GIF or WebP, checked by content); repeatable
  --file PATH        point the agent at a file of the workspace (it reads it with the turn); repeatable`;

/** The --image and --file options, as parseArgs takes them (both repeatable). */
export const attachmentOptions = {
  image: { type: 'string', multiple: true },
  file: { type: 'string', multiple: true },
} as const;

/** Images and file references of a turn, their paths made absolute against the current directory. */
export interface TurnAttachments {
  readonly images: readonly string[];
  readonly files: readonly string[];
}

export function parseAttachments(
  values: { image?: unknown; file?: unknown },
  context: Pick<CliContext, 'cwd'>,
): TurnAttachments {
  const absolute = (paths: unknown) =>
    Array.isArray(paths) ? paths.map((given) => resolveGivenPath(String(given), context.cwd)) : [];
  return { images: absolute(values.image), files: absolute(values.file) };
}

/**
 * A turn's input parts: the images before the prompt (the Messages API's advice for images), the
 * file references after it. Paths go as they are: Tether reads and checks them at submit, so a bad
 * one is refused before anything is recorded, the same whether a daemon or this process runs the turn.
 */
export function turnInput(prompt: string, attachments: TurnAttachments | undefined): SubmittedInputPart[] {
  return [
    ...(attachments?.images ?? []).map((image) => ({ type: 'image' as const, path: image })),
    { type: 'text', text: prompt },
    ...(attachments?.files ?? []).map((file) => ({ type: 'file' as const, path: file })),
  ];
}
