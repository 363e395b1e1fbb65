import { z } from 'zod';

export const TokenUsage = z.strictObject({
  inputTokens: z.number().int().nonnegative(),
  outputTokens: z.number().int().nonnegative(),
  cacheReadTokens: z.number().int().nonnegative(),
  cacheCreationTokens: z.number().int().nonnegative(),
  /** Cost in USD when the provider knows it; null otherwise. */
  costUsd: z.number().nonnegative().nullable(),
});
export type TokenUsage = z.infer<typeof TokenUsage>;

export const zeroUsage: TokenUsage = Object.freeze({
  inputTokens: 0,
  outputTokens: 0,
  cacheReadTokens: 0,
  cacheCreationTokens: 0,
  costUsd: null,
});

export function addUsage(total: TokenUsage, part: TokenUsage): TokenUsage {
  return {
    inputTokens: total.inputTokens + part.inputTokens,
    outputTokens: total.outputTokens + part.outputTokens,
    cacheReadTokens: total.cacheReadTokens + part.cacheReadTokens,
    cacheCreationTokens: total.cacheCreationTokens + part.cacheCreationTokens,
    costUsd: total.costUsd === null && part.costUsd === null ? null : (total.costUsd ?? 0) + (part.costUsd ?? 0),
  };
}
