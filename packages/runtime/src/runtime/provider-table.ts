import { AgentError } from '@tether/protocol';
import type { AgentProviderV1 } from '@tether/provider-spec';

function invalidProviders(message: string, reason: string): AgentError {
  return new AgentError({ code: 'invalid_command', message, details: { reason } });
}

/**
 * createAgentRuntime's providers by name and the default among them, or the option that is wrong:
 * none given (`provider_unavailable`, as before), two with one name (`duplicate_provider`), a
 * `defaultProvider` that names none of them (`unknown_provider`, as an unknown provider anywhere).
 */
export function providerTable(
  providers: readonly AgentProviderV1[],
  defaultProvider: string | undefined,
): { readonly byName: Map<string, AgentProviderV1>; readonly defaultProvider: string } {
  if (providers.length === 0) {
    throw new AgentError({
      code: 'provider_unavailable',
      message: 'createAgentRuntime needs at least one provider (e.g. createClaudeProvider()).',
      details: { reason: 'no_provider' },
    });
  }
  const byName = new Map<string, AgentProviderV1>();
  for (const provider of providers) {
    if (byName.has(provider.name))
      throw invalidProviders(
        `createAgentRuntime was given two providers named "${provider.name}". Pass each provider once: sessions name their provider by that name.`,
        'duplicate_provider',
      );
    byName.set(provider.name, provider);
  }
  const names = [...byName.keys()];
  const chosen = defaultProvider ?? names[0]!;
  if (!byName.has(chosen))
    throw invalidProviders(
      `createAgentRuntime's defaultProvider "${chosen}" names no configured provider. Configured: ${names.join(', ')}. Name one of them, or leave defaultProvider out (the first provider is the default).`,
      'unknown_provider',
    );
  return { byName, defaultProvider: chosen };
}
