import type { ImageMediaType } from './input.js';

/** What an image's bytes say about it. */
export interface ImageFacts {
  readonly mediaType: ImageMediaType;
  readonly width: number;
  readonly height: number;
}

/** Why bytes are not an image Tether can pass on: a stable value for details.reason. */
export type ImageRefusal = 'not_an_image' | 'image_unreadable';

function startsWith(bytes: Uint8Array, signature: readonly number[], offset = 0): boolean {
  return signature.every((byte, index) => bytes[offset + index] === byte);
}

function ascii(bytes: Uint8Array, offset: number, length: number): string {
  return String.fromCharCode(...bytes.subarray(offset, offset + length));
}

function view(bytes: Uint8Array): DataView {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function png(bytes: Uint8Array): ImageFacts | ImageRefusal {
  // The IHDR chunk comes first: length (4), "IHDR", width, height (big-endian).
  if (bytes.length < 24 || ascii(bytes, 12, 4) !== 'IHDR') return 'image_unreadable';
  const data = view(bytes);
  return { mediaType: 'image/png', width: data.getUint32(16), height: data.getUint32(20) };
}

function gif(bytes: Uint8Array): ImageFacts | ImageRefusal {
  if (bytes.length < 10) return 'image_unreadable';
  const data = view(bytes);
  return { mediaType: 'image/gif', width: data.getUint16(6, true), height: data.getUint16(8, true) };
}

/** Start-of-frame markers carry the size; C4 (Huffman tables), C8 and CC (arithmetic coding) do not. */
function isStartOfFrame(marker: number): boolean {
  return marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
}

function jpeg(bytes: Uint8Array): ImageFacts | ImageRefusal {
  const data = view(bytes);
  let offset = 2;
  while (offset + 4 <= bytes.length) {
    if (bytes[offset] !== 0xff) return 'image_unreadable';
    const marker = bytes[offset + 1]!;
    // Fill bytes, and markers that stand alone (no length): restart markers, TEM.
    if (marker === 0xff) {
      offset += 1;
      continue;
    }
    if ((marker >= 0xd0 && marker <= 0xd7) || marker === 0x01) {
      offset += 2;
      continue;
    }
    const length = data.getUint16(offset + 2);
    if (length < 2) return 'image_unreadable';
    if (isStartOfFrame(marker)) {
      if (offset + 9 > bytes.length) return 'image_unreadable';
      return { mediaType: 'image/jpeg', height: data.getUint16(offset + 5), width: data.getUint16(offset + 7) };
    }
    // Start of scan or end of image before any frame header: the size is nowhere.
    if (marker === 0xda || marker === 0xd9) return 'image_unreadable';
    offset += 2 + length;
  }
  return 'image_unreadable';
}

function webp(bytes: Uint8Array): ImageFacts | ImageRefusal {
  if (bytes.length < 30) return 'image_unreadable';
  const chunk = ascii(bytes, 12, 4);
  const data = view(bytes);
  if (chunk === 'VP8 ') {
    // A lossy key frame: start code 9D 01 2A, then 14-bit width and height (little-endian, 2 scale bits).
    if (!startsWith(bytes, [0x9d, 0x01, 0x2a], 23)) return 'image_unreadable';
    return {
      mediaType: 'image/webp',
      width: data.getUint16(26, true) & 0x3fff,
      height: data.getUint16(28, true) & 0x3fff,
    };
  }
  if (chunk === 'VP8L') {
    // Lossless: signature 2F, then width-1 and height-1 in 14 bits each.
    if (bytes[20] !== 0x2f) return 'image_unreadable';
    const packed = data.getUint32(21, true);
    return { mediaType: 'image/webp', width: (packed & 0x3fff) + 1, height: ((packed >>> 14) & 0x3fff) + 1 };
  }
  if (chunk === 'VP8X') {
    // Extended: canvas width-1 and height-1 in 24 bits each.
    const width = (bytes[24]! | (bytes[25]! << 8) | (bytes[26]! << 16)) + 1;
    const height = (bytes[27]! | (bytes[28]! << 8) | (bytes[29]! << 16)) + 1;
    return { mediaType: 'image/webp', width, height };
  }
  return 'image_unreadable';
}

/**
 * The format and size of an image, read from its bytes alone (PNG, JPEG, GIF, WebP): what the
 * Messages API accepts. Anything else, or a header too damaged to give a size, is refused.
 */
export function inspectImage(bytes: Uint8Array): ImageFacts | ImageRefusal {
  let facts: ImageFacts | ImageRefusal = 'not_an_image';
  if (startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) facts = png(bytes);
  else if (startsWith(bytes, [0xff, 0xd8, 0xff])) facts = jpeg(bytes);
  else if (ascii(bytes, 0, 6) === 'GIF87a' || ascii(bytes, 0, 6) === 'GIF89a') facts = gif(bytes);
  else if (ascii(bytes, 0, 4) === 'RIFF' && ascii(bytes, 8, 4) === 'WEBP') facts = webp(bytes);
  if (typeof facts !== 'string' && (facts.width === 0 || facts.height === 0)) return 'image_unreadable';
  return facts;
}
