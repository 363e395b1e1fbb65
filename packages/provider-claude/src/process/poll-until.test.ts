import { describe, expect, it } from 'vitest';
import { pollUntil } from './poll-until.js';

describe('pollUntil', () => {
  it('resolves true as soon as the condition holds', async () => {
    let checks = 0;
    expect(await pollUntil(() => ++checks >= 3, { timeoutMs: 5_000, intervalMs: 1 })).toBe(true);
    expect(checks).toBe(3);
  });

  it('checks at least once, also with no time at all', async () => {
    expect(await pollUntil(() => true, { timeoutMs: 0 })).toBe(true);
    expect(await pollUntil(() => false, { timeoutMs: 0 })).toBe(false);
  });

  it('gives up with false once the time is up', async () => {
    const started = Date.now();
    expect(await pollUntil(() => false, { timeoutMs: 50, intervalMs: 5 })).toBe(false);
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
  });
});
