import { type ImageDataInputPart, type ImageFacts, imageLimits, inspectImage } from '@tether/protocol';

/** An image waiting in the composer: what it sends, and what the preview shows. */
export interface ImageAttachment {
  readonly id: string;
  readonly name: string;
  readonly part: ImageDataInputPart;
  readonly facts: ImageFacts;
  readonly byteLength: number;
}

function megabytes(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

/** Base64 without a data: prefix, as the protocol's image part carries it. */
export function toBase64(bytes: Uint8Array): string {
  let binary = '';
  // String.fromCharCode takes its arguments on the stack: a few KB at a time stays well inside it.
  for (let offset = 0; offset < bytes.length; offset += 0x2000) {
    binary += String.fromCharCode(...bytes.subarray(offset, offset + 0x2000));
  }
  return btoa(binary);
}

/**
 * Checks an image before it joins the turn, with the rules the runtime applies at submit (by its
 * bytes, never its name; the Messages API's limits), so a refusal shows at once. Returns the
 * attachment, or a sentence saying why not and what to do.
 */
export function attachImage(
  id: string,
  name: string,
  bytes: Uint8Array,
  waiting: readonly ImageAttachment[],
): ImageAttachment | string {
  const facts = inspectImage(bytes);
  if (facts === 'not_an_image') return `${name} is not a PNG, JPEG, GIF or WebP image.`;
  if (facts === 'image_unreadable') return `${name} looks like an image but its header is damaged; try another copy.`;
  if (bytes.length > imageLimits.maxBytes)
    return `${name} is ${megabytes(bytes.length)}; an image may be at most ${megabytes(imageLimits.maxBytes)}.`;
  if (waiting.length + 1 > imageLimits.maxImages)
    return `A turn can carry at most ${imageLimits.maxImages} images; send these first.`;
  const total = waiting.reduce((sum, attachment) => sum + attachment.byteLength, bytes.length);
  if (total > imageLimits.maxTotalBytes)
    return `The turn's images would be ${megabytes(total)} together; at most ${megabytes(imageLimits.maxTotalBytes)}.`;
  const attachment: ImageAttachment = {
    id,
    name,
    part: { type: 'image', mediaType: facts.mediaType, data: toBase64(bytes) },
    facts,
    byteLength: bytes.length,
  };
  const tooLarge = oversizedImage([...waiting, attachment]);
  if (tooLarge !== null) return tooLarge;
  return attachment;
}

/** The first image whose sides are beyond the limit for a turn with this many images, as a sentence. */
function oversizedImage(attachments: readonly ImageAttachment[]): string | null {
  const many = attachments.length > imageLimits.manyImages;
  const limit = many ? imageLimits.maxDimensionWhenMany : imageLimits.maxDimension;
  const found = attachments.find(({ facts }) => facts.width > limit || facts.height > limit);
  if (found === undefined) return null;
  const size = `${found.facts.width}×${found.facts.height}`;
  return many
    ? `${found.name} is ${size} pixels; with more than ${imageLimits.manyImages} images in a turn, each side may be at most ${limit}.`
    : `${found.name} is ${size} pixels; each side may be at most ${limit}.`;
}
