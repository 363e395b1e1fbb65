import { z } from 'zod';

/**
 * The longest text one input part may carry, in characters: Unicode code points, as zod's max and the
 * OpenAPI document's maxLength count them (a text of astral characters may be up to twice as many
 * UTF-16 code units; the fast path counts code units and leaves a longer text to the schema).
 */
export const textInputLengthLimit = 1_000_000;

export const TextInputPart = z.strictObject({
  type: z.literal('text'),
  text: z.string().min(1).max(textInputLengthLimit),
});
export type TextInputPart = z.infer<typeof TextInputPart>;

/** The image formats a turn may carry, recognised by their bytes (never by a file name or a declared type). */
export const ImageMediaType = z.enum(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);
export type ImageMediaType = z.infer<typeof ImageMediaType>;

/** A path as a host names it: a file Tether reads when the turn is submitted. */
const submittedPath = z
  .string()
  .min(1)
  .max(4096)
  .refine((value) => !value.includes('\0'), 'must not contain NUL');

/** An image given inline: its bytes in base64 (no data: URL prefix). */
export const ImageDataInputPart = z.strictObject({
  type: z.literal('image'),
  mediaType: ImageMediaType,
  data: z.string().min(1).max(50_000_000),
});
export type ImageDataInputPart = z.infer<typeof ImageDataInputPart>;

/** An image by path (absolute, or relative to the session's workspace), read by Tether at submit. */
export const ImagePathInputPart = z.strictObject({
  type: z.literal('image'),
  path: submittedPath,
});
export type ImagePathInputPart = z.infer<typeof ImagePathInputPart>;

/**
 * A file of the workspace the agent should read with the turn (absolute, or relative to the
 * workspace; refused outside it). Claude Code gets it as a mention (`@path`), which it attaches.
 */
export const FileInputPart = z.strictObject({
  type: z.literal('file'),
  path: submittedPath,
});
export type FileInputPart = z.infer<typeof FileInputPart>;

/** What a host may put in submit_turn's input. */
export const SubmittedInputPart = z.union([TextInputPart, ImageDataInputPart, ImagePathInputPart, FileInputPart]);
export type SubmittedInputPart = z.infer<typeof SubmittedInputPart>;

/**
 * An image as the log records it: by reference to a content-addressed blob of the session (read it
 * with GET /v1/sessions/:id/blobs/:sha256), never its bytes, so a replay never carries them again.
 */
export const RecordedImagePart = z.strictObject({
  type: z.literal('image'),
  mediaType: ImageMediaType,
  /** Lowercase hex SHA-256 of the image's bytes. */
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  byteLength: z.number().int().positive(),
  width: z.number().int().positive(),
  height: z.number().int().positive(),
});
export type RecordedImagePart = z.infer<typeof RecordedImagePart>;

/** A file reference as recorded: its path relative to the workspace, "/"-separated. */
export const RecordedFilePart = z.strictObject({
  type: z.literal('file'),
  path: z.string().min(1).max(4096),
});
export type RecordedFilePart = z.infer<typeof RecordedFilePart>;

/** A turn's input as run.started records it (and hosts render it). */
export const InputPart = z.discriminatedUnion('type', [TextInputPart, RecordedImagePart, RecordedFilePart]);
export type InputPart = z.infer<typeof InputPart>;

/** The input part types Tether knows; any other is refused with capability_unsupported. */
export const inputPartTypes = ['text', 'image', 'file'] as const;
export type InputPartType = (typeof inputPartTypes)[number];

/**
 * Where an input part stands in its turn, counted as a person counts ("2 of 3"): what a message
 * names a part by. `details.index` keeps the zero-based index for programs.
 */
export function inputPartPosition(index: number, count: number): string {
  return `${index + 1} of ${count}`;
}

/** The loose shape used to recognise an input part before its type is known to be supported. */
export const AnyInputPart = z.looseObject({ type: z.string().min(1).max(100) });
