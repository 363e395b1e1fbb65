import { imageLimits } from '@tether/protocol';
import { describe, expect, it } from 'vitest';
import { type ImageAttachment, attachImage, toBase64 } from './image-attachments.js';

/** A PNG's signature and IHDR chunk (all inspectImage reads), padded to `length` bytes. */
function pngHeader(width: number, height: number, length = 33): Uint8Array {
  const bytes = new Uint8Array(length);
  bytes.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]);
  const view = new DataView(bytes.buffer);
  view.setUint32(16, width);
  view.setUint32(20, height);
  return bytes;
}

function attached(result: ImageAttachment | string): ImageAttachment {
  if (typeof result === 'string') throw new Error(`refused: ${result}`);
  return result;
}

describe('images attached in the composer', () => {
  it('recognises an image by its bytes, whatever its name, and carries them as base64 without a prefix', () => {
    const bytes = pngHeader(640, 480);
    const attachment = attached(attachImage('a', 'screenshot.jpg', bytes, []));
    expect(attachment.part).toEqual({
      type: 'image',
      mediaType: 'image/png',
      data: Buffer.from(bytes).toString('base64'),
    });
    expect(attachment.facts).toMatchObject({ width: 640, height: 480 });
    expect(attachment.byteLength).toBe(33);
  });

  it('encodes large images the same as Node does', () => {
    const bytes = new Uint8Array(100_003).map((_, index) => (index * 31) % 256);
    expect(toBase64(bytes)).toBe(Buffer.from(bytes).toString('base64'));
  });

  it('refuses what is not an image, or an image beyond the Messages API limits, saying why', () => {
    expect(attachImage('a', 'notes.png', new TextEncoder().encode('just some text'), [])).toBe(
      'notes.png is not a PNG, JPEG, GIF or WebP image.',
    );
    expect(attachImage('a', 'cut.png', pngHeader(10, 10).subarray(0, 20), [])).toMatch(/header is damaged/);
    expect(attachImage('a', 'huge.png', pngHeader(100, 100, imageLimits.maxBytes + 1), [])).toMatch(
      /^huge\.png is 5\.0 MB; an image may be at most 5\.0 MB\.$/,
    );
    expect(attachImage('a', 'wide.png', pngHeader(imageLimits.maxDimension + 1, 10), [])).toBe(
      'wide.png is 8001×10 pixels; each side may be at most 8000.',
    );
  });

  it('applies the limits of the turn as a whole: count, total size, smaller sides when there are many', () => {
    const medium = Array.from({ length: imageLimits.manyImages }, (_, index) =>
      attached(attachImage(`m${index}`, `m${index}.png`, pngHeader(imageLimits.maxDimensionWhenMany + 1, 10), [])),
    );
    expect(attachImage('x', 'one-more.png', pngHeader(10, 10), medium)).toMatch(
      /^m0\.png is 2001×10 pixels; with more than 20 images in a turn, each side may be at most 2000\.$/,
    );
    const full = Array.from({ length: imageLimits.maxImages }, () => medium[0]!);
    expect(attachImage('x', 'x.png', pngHeader(10, 10), full)).toMatch(/at most 100 images/);
    const heavy = [{ ...medium[0]!, byteLength: imageLimits.maxTotalBytes }];
    expect(attachImage('x', 'x.png', pngHeader(10, 10), heavy)).toMatch(/together; at most 24\.0 MB/);
  });
});
