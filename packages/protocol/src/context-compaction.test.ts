import { describe, expect, it } from 'vitest';
import { describeContextCompaction } from './context-compaction.js';

describe('describeContextCompaction', () => {
  it('says who compacted and the sizes it knows', () => {
    expect(describeContextCompaction({ trigger: 'automatic', tokensBefore: 180_000, tokensAfter: 9_000 })).toBe(
      'Context compacted by the agent as it filled up: 180,000 → 9,000 tokens',
    );
    expect(describeContextCompaction({ trigger: 'requested', tokensBefore: 52_000, tokensAfter: null })).toBe(
      'Context compacted: 52,000 → ? tokens',
    );
    expect(describeContextCompaction({ trigger: 'requested', tokensBefore: null, tokensAfter: null })).toBe(
      'Context compacted',
    );
  });
});
