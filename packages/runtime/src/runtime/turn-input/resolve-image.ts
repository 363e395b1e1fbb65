import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { type ImageDataInputPart, type ImagePathInputPart, imageLimits, inspectImage } from '@tether/protocol';
import type { ImageFacts } from '@tether/protocol';
import { inputRefusal } from './input-refusal.js';

/** An image's bytes and what they say about it, checked against the per-image limits. */
export interface ResolvedImage extends ImageFacts {
  readonly bytes: Uint8Array;
}

const megabytes = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
/**
 * Standard base64, padded: checked as alphabet-then-padding plus a length that is a multiple of 4. A
 * repeated group (`(?:[A-Za-z0-9+/]{4})*`) backtracks through a stack frame per group in V8, and an
 * image of ~4 MB (well inside the limit) overflowed the stack with a RangeError.
 */
const base64Characters = /^[A-Za-z0-9+/]*={0,2}$/;
const isStrictBase64 = (data: string) => data.length % 4 === 0 && base64Characters.test(data);

function decodeBase64(data: string, position: string): Uint8Array {
  if (data.startsWith('data:')) {
    throw inputRefusal(
      'image_invalid_base64',
      `Input part ${position} has a data: URL; send only the base64 after the comma, with the media type in "mediaType".`,
    );
  }
  // Buffer.from forgives any garbage; a host that sent garbage should hear so, not see a broken image.
  if (!isStrictBase64(data)) {
    throw inputRefusal(
      'image_invalid_base64',
      `Input part ${position}'s data is not valid base64. Send the image's bytes in standard base64 (A-Z, a-z, 0-9, +, /, padded with =, no line breaks).`,
    );
  }
  return Buffer.from(data, 'base64');
}

async function readImageFile(part: ImagePathInputPart, workspace: string, position: string): Promise<Uint8Array> {
  const file = path.resolve(workspace, part.path);
  const cannotRead = () =>
    inputRefusal(
      'image_unreadable_file',
      `Input part ${position}: the image file ${file} does not exist or cannot be read. Check the path${path.isAbsolute(part.path) ? '' : ' (a relative one is resolved against the workspace)'} and its permissions.`,
    );
  let size: number;
  let notAFile = false;
  try {
    const found = await stat(file);
    notAFile = !found.isFile();
    if (notAFile) throw cannotRead();
    size = found.size;
  } catch {
    if (notAFile)
      throw inputRefusal(
        'image_unreadable_file',
        `Input part ${position}: ${file} is not a file (a folder, or a device). Give the path of an image file.`,
      );
    throw cannotRead();
  }
  // Refused before reading: a huge file is not worth loading to be turned away.
  if (size > imageLimits.maxBytes) throw tooLarge(size, position);
  try {
    return await readFile(file);
  } catch {
    throw cannotRead();
  }
}

function tooLarge(size: number, position: string) {
  return inputRefusal(
    'image_too_large',
    `Input part ${position} is an image of ${megabytes(size)}; the limit is ${megabytes(imageLimits.maxBytes)}. Resize or compress it and submit again.`,
  );
}

/**
 * Reads an image part (inline or from a file) and checks it by its bytes: a format the Messages
 * API takes, matching the declared media type, within the size and dimension limits.
 * `imagesInTurn` decides which dimension limit applies (stricter when a turn carries many).
 */
export async function resolveImage(
  part: ImageDataInputPart | ImagePathInputPart,
  context: { readonly workspace: string; readonly position: string; readonly imagesInTurn: number },
): Promise<ResolvedImage> {
  const { position } = context;
  const bytes =
    'data' in part ? decodeBase64(part.data, position) : await readImageFile(part, context.workspace, position);
  if (bytes.length > imageLimits.maxBytes) throw tooLarge(bytes.length, position);
  const facts = inspectImage(bytes);
  if (facts === 'not_an_image') {
    throw inputRefusal(
      'not_an_image',
      bytes.length === 0
        ? `Input part ${position} is empty (0 bytes), so it is no image. Attach the image file itself (a save or a download may not have finished).`
        : `Input part ${position} is not a PNG, JPEG, GIF or WebP image (judged by its bytes, not its name). Convert it to one of those formats.`,
    );
  }
  if (facts === 'image_unreadable') {
    throw inputRefusal(
      'image_unreadable',
      `Input part ${position} looks like an image but its header is damaged or cut short, so its size cannot be read. Save it again and resubmit.`,
    );
  }
  if ('mediaType' in part && part.mediaType !== facts.mediaType) {
    throw inputRefusal(
      'image_media_type_mismatch',
      `Input part ${position} is declared ${part.mediaType}, but its bytes are ${facts.mediaType}. Send mediaType "${facts.mediaType}".`,
    );
  }
  const many = context.imagesInTurn > imageLimits.manyImages;
  const maxDimension = many ? imageLimits.maxDimensionWhenMany : imageLimits.maxDimension;
  if (facts.width > maxDimension || facts.height > maxDimension) {
    const when = many ? ` when a turn carries more than ${imageLimits.manyImages} images` : '';
    throw inputRefusal(
      'image_dimensions_too_large',
      `Input part ${position} is ${facts.width}×${facts.height} pixels; the limit is ${maxDimension} on either side${when}. Scale it down and submit again.`,
    );
  }
  return { ...facts, bytes };
}
