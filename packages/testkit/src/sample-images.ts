/**
 * The smallest byte sequences each image format's header is recognised by, with a size of the
 * test's choosing: enough for Tether's checks (which read headers only), not for a decoder.
 */

function bytes(...parts: (string | readonly number[])[]): Uint8Array {
  return Uint8Array.from(
    parts.flatMap((part) => (typeof part === 'string' ? [...part].map((c) => c.charCodeAt(0)) : part)),
  );
}

const uint32BigEndian = (value: number) => [
  (value >>> 24) & 255,
  (value >>> 16) & 255,
  (value >>> 8) & 255,
  value & 255,
];
const uint16BigEndian = (value: number) => [(value >>> 8) & 255, value & 255];
const uint16LittleEndian = (value: number) => [value & 255, (value >>> 8) & 255];
const uint24LittleEndian = (value: number) => [value & 255, (value >>> 8) & 255, (value >>> 16) & 255];
const uint32LittleEndian = (value: number) => [
  ...uint16LittleEndian(value & 0xffff),
  ...uint16LittleEndian(value >>> 16),
];

/** A PNG: signature, then the IHDR chunk (width and height big-endian), then an empty IEND. */
export function pngBytes(width: number, height: number): Uint8Array {
  return bytes(
    [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a],
    uint32BigEndian(13),
    'IHDR',
    uint32BigEndian(width),
    uint32BigEndian(height),
    [8, 6, 0, 0, 0],
    [0, 0, 0, 0],
    uint32BigEndian(0),
    'IEND',
    [0xae, 0x42, 0x60, 0x82],
  );
}

/** A JPEG: SOI, a JFIF APP0 segment, a baseline frame header (SOF0: height then width), EOI. */
export function jpegBytes(width: number, height: number): Uint8Array {
  return bytes(
    [0xff, 0xd8],
    [0xff, 0xe0],
    uint16BigEndian(16),
    'JFIF\0',
    [1, 1, 0, 0, 1, 0, 1, 0, 0],
    [0xff, 0xc0],
    uint16BigEndian(17),
    [8],
    uint16BigEndian(height),
    uint16BigEndian(width),
    [3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1],
    [0xff, 0xd9],
  );
}

/** A GIF89a: the logical screen descriptor (width and height little-endian), then the trailer. */
export function gifBytes(width: number, height: number): Uint8Array {
  return bytes('GIF89a', uint16LittleEndian(width), uint16LittleEndian(height), [0, 0, 0], ';');
}

/** A WebP in one of its three encodings, each of which keeps the size differently. */
export function webpBytes(
  width: number,
  height: number,
  encoding: 'lossy' | 'lossless' | 'extended' = 'extended',
): Uint8Array {
  const chunk =
    encoding === 'lossy'
      ? bytes(
          'VP8 ',
          uint32LittleEndian(10),
          [0x10, 0x02, 0x00],
          [0x9d, 0x01, 0x2a],
          uint16LittleEndian(width),
          uint16LittleEndian(height),
        )
      : encoding === 'lossless'
        ? bytes(
            'VP8L',
            uint32LittleEndian(10),
            [0x2f],
            uint32LittleEndian(((width - 1) | ((height - 1) << 14)) >>> 0),
            [0, 0, 0, 0, 0],
          )
        : bytes(
            'VP8X',
            uint32LittleEndian(10),
            [0, 0, 0, 0],
            uint24LittleEndian(width - 1),
            uint24LittleEndian(height - 1),
          );
  return bytes('RIFF', uint32LittleEndian(4 + chunk.length), 'WEBP', [...chunk]);
}
