import { prewarm, query } from '@anthropic-ai/claude-agent-sdk';
import { describe, expect, it } from 'vitest';
import type { AgentSdkPrewarmFunction, AgentSdkQueryFunction } from './agent-sdk-types.js';

describe('the structural Agent SDK types', () => {
  it("accept the installed SDK's own query export without a cast", () => {
    // A compile-time check (tsconfig.tests.json type-checks this file against the installed SDK).
    const official: AgentSdkQueryFunction = query;
    expect(typeof official).toBe('function');
  });

  it("accept the installed SDK's own prewarm export without a cast", () => {
    const official: AgentSdkPrewarmFunction = prewarm;
    expect(typeof official).toBe('function');
  });
});
