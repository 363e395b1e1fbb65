import { describe, expect, it } from 'vitest';
import { decodeSessionCursor, encodeSessionCursor } from './session-cursor.js';

const refusal = 'Not a cursor of this surface.';

describe('session cursors', () => {
  it('name the position they were made from', () => {
    const position = { createdAt: '2026-01-01T00:00:02.000Z', sessionId: 'ses_x' };
    expect(decodeSessionCursor(encodeSessionCursor(position), refusal)).toEqual(position);
  });

  it("refuse anything else with the surface's message, invalid_cursor", () => {
    const forged = [
      'garbage',
      '',
      Buffer.from('{"a":1}').toString('base64url'),
      Buffer.from('[1,2]').toString('base64url'),
      Buffer.from('["2026-01-01T00:00:02.000Z"]').toString('base64url'),
    ];
    for (const cursor of forged)
      expect(() => decodeSessionCursor(cursor, refusal)).toThrow(
        expect.objectContaining({ code: 'invalid_command', message: refusal, details: { reason: 'invalid_cursor' } }),
      );
  });
});
