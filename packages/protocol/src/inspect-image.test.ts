import { describe, expect, it } from 'vitest';
import { inspectImage } from './inspect-image.js';

/** Bytes from hex, spaces allowed (each header below is laid out field by field). */
function hex(text: string): Uint8Array {
  return Uint8Array.from(Buffer.from(text.replaceAll(' ', ''), 'hex'));
}

// Headers as the formats' specifications lay them out, with sizes chosen so that byte order matters.
const headers = {
  // Signature; IHDR chunk: length 13, "IHDR", width 0x0280 (640), height 0x01e0 (480), depth 8, RGBA, CRC.
  png: hex('89504e470d0a1a0a 0000000d 49484452 00000280 000001e0 08 06 000000 a1b2c3d4'),
  // SOI; APP0 "JFIF" (length 16); DQT (length 67, skipped); SOF2 progressive (length 17): precision 8,
  // height 0x0438 (1080), width 0x0780 (1920); EOI.
  jpeg: hex(
    `ffd8 ffe0 0010 4a46494600 0101 000001 000100 00 ffdb 0043 00 ${'01'.repeat(64)} ffc2 0011 08 0438 0780 03 012200 021101 031101 ffd9`,
  ),
  // "GIF89a"; logical screen: width 0x0140 (320), height 0x00c8 (200), little-endian; flags; trailer.
  gif: hex('474946383961 4001 c800 00 00 00 3b'),
  // RIFF container of WEBP; VP8 (lossy) key frame: tag, start code 9d012a, width 0x0190 (400), height 0x012c (300).
  webpLossy: hex('52494646 16000000 57454250 56503820 0a000000 100200 9d012a 9001 2c01'),
  // VP8L (lossless): signature 2f, then (width-1)=99 and (height-1)=49 in 14 bits each, little-endian.
  webpLossless: hex('52494646 16000000 57454250 5650384c 0a000000 2f 63400c00 0000000000'),
  // VP8X (extended): flags, then canvas (width-1)=0x0f9f (3999) and (height-1)=0x0bb7 (2999), 24 bits each.
  webpExtended: hex('52494646 16000000 57454250 56503858 0a000000 10000000 9f0f00 b70b00'),
};

describe('inspectImage', () => {
  it('reads each format and its size from the header alone', () => {
    expect(inspectImage(headers.png)).toEqual({ mediaType: 'image/png', width: 640, height: 480 });
    expect(inspectImage(headers.jpeg)).toEqual({ mediaType: 'image/jpeg', width: 1920, height: 1080 });
    expect(inspectImage(headers.gif)).toEqual({ mediaType: 'image/gif', width: 320, height: 200 });
    expect(inspectImage(headers.webpLossy)).toEqual({ mediaType: 'image/webp', width: 400, height: 300 });
    expect(inspectImage(headers.webpLossless)).toEqual({ mediaType: 'image/webp', width: 100, height: 50 });
    expect(inspectImage(headers.webpExtended)).toEqual({ mediaType: 'image/webp', width: 4000, height: 3000 });
  });

  it('skips JPEG fill bytes and standalone markers before the frame header', () => {
    const padded = hex(`ffd8 ffff ffd0 ffc0 0011 08 0010 0020 03 012200 021101 031101 ffd9`);
    expect(inspectImage(padded)).toEqual({ mediaType: 'image/jpeg', width: 32, height: 16 });
  });

  it('answers image_unreadable for a recognised format whose header is cut short or damaged', () => {
    for (const [format, bytes] of Object.entries(headers)) {
      // Past the signature, before the size: a GIF's ends at byte 10, a JPEG's frame header comes after its tables.
      const cut = bytes.subarray(0, format === 'gif' ? 8 : format === 'jpeg' ? 30 : 20);
      expect(inspectImage(cut), `${format} cut short`).toBe('image_unreadable');
    }
    // A PNG whose first chunk is not IHDR, a JPEG whose scan starts before any frame header, a zero-sized GIF.
    expect(inspectImage(hex('89504e470d0a1a0a 0000000d 49444154 00000280 000001e0 08 06 000000'))).toBe(
      'image_unreadable',
    );
    expect(inspectImage(hex('ffd8 ffda 000c 03 010002110311003f00 ffd9'))).toBe('image_unreadable');
    expect(inspectImage(hex('474946383961 0000 c800 00 00 00 3b'))).toBe('image_unreadable');
    // A WebP lossy chunk without the key frame's start code.
    expect(inspectImage(hex('52494646 16000000 57454250 56503820 0a000000 100200 000000 9001 2c01'))).toBe(
      'image_unreadable',
    );
  });

  it('answers not_an_image for bytes of no image format, whatever their length', () => {
    let seed = 7;
    const random = Uint8Array.from({ length: 4096 }, () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed >>> 16;
    });
    expect(inspectImage(random)).toBe('not_an_image');
    expect(inspectImage(new Uint8Array())).toBe('not_an_image');
    expect(inspectImage(new TextEncoder().encode('<svg xmlns="http://www.w3.org/2000/svg"/>'))).toBe('not_an_image');
    // A RIFF file that is not WebP (a WAVE), and a PNG signature cut before its end.
    expect(inspectImage(hex('52494646 16000000 57415645 666d7420'))).toBe('not_an_image');
    expect(inspectImage(hex('89504e470d0a'))).toBe('not_an_image');
  });
});
