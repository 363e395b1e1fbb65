import { describe, expect, it } from 'vitest';
import { SessionId, newCommandId, newRunId, newSessionId } from './identifiers.js';
import { InteractionRef, newInteractionRef } from './interactions.js';
import { randomHex32 } from './random-hex.js';

describe('randomHex32', () => {
  it('gives 32 lower-case hex digits, different each time, across the blocks its bytes are drawn in', () => {
    const values = new Set(Array.from({ length: 600 }, () => randomHex32()));
    expect(values.size).toBe(600);
    for (const value of values) expect(value).toMatch(/^[0-9a-f]{32}$/);
  });

  it('makes ids the schemas accept', () => {
    expect(SessionId.safeParse(newSessionId()).success).toBe(true);
    expect(InteractionRef.safeParse(newInteractionRef()).success).toBe(true);
    expect(newRunId()).toMatch(/^run_[0-9a-f]{32}$/);
    expect(newCommandId()).toMatch(/^cmd_[0-9a-f]{32}$/);
  });
});
