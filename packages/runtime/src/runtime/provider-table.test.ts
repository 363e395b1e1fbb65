import { agentErrorOf, createMockProvider } from '@tether/testkit';
import { describe, expect, it } from 'vitest';
import { createAgentRuntime } from './agent-runtime.js';

// createAgentRuntime says which option is wrong: the providers it was given, or the default among them.

describe('createAgentRuntime providers', () => {
  it('refuses a defaultProvider that names no configured provider, naming it and the configured ones', async () => {
    const error = await agentErrorOf(
      createAgentRuntime({
        providers: [createMockProvider({ name: 'claude' }), createMockProvider({ name: 'other' })],
        defaultProvider: 'nope',
      }),
    );
    expect(error).toMatchObject({ code: 'invalid_command', retryable: false, details: { reason: 'unknown_provider' } });
    expect(error.message).toContain('"nope"');
    expect(error.message).toContain('claude, other');
    expect(error.message).not.toContain('at least one provider');
  });

  it('refuses two providers with the same name', async () => {
    const error = await agentErrorOf(
      createAgentRuntime({
        providers: [createMockProvider({ name: 'claude' }), createMockProvider({ name: 'claude' })],
      }),
    );
    expect(error).toMatchObject({ code: 'invalid_command', details: { reason: 'duplicate_provider' } });
    expect(error.message).toContain('"claude"');
  });

  it('still asks for a provider when none is given, and takes a default that names one', async () => {
    expect(await agentErrorOf(createAgentRuntime({ providers: [] }))).toMatchObject({
      code: 'provider_unavailable',
      details: { reason: 'no_provider' },
    });
    const runtime = await createAgentRuntime({
      providers: [createMockProvider({ name: 'first' }), createMockProvider({ name: 'second' })],
      defaultProvider: 'second',
    });
    try {
      expect(runtime.providerNames).toEqual(['first', 'second']);
    } finally {
      await runtime.shutdown();
    }
  });
});
