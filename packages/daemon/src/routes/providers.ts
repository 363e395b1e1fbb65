import type { Hono } from 'hono';
import { AgentError } from '@tether/protocol';
import { daemonStopping } from '../errors/error-response.js';
import type { DaemonEnvironment } from '../http/request-environment.js';
import type { DaemonState } from '../daemon-state.js';

// Bounds how long a listing waits for an agent binary that does not answer `--version`.
const probeTimeoutMs = 5_000;

function unknownProvider(name: string, known: readonly string[]): AgentError {
  return new AgentError({
    code: 'route_not_found',
    message: `No provider named "${name.slice(0, 100)}" is configured. Available: ${known.join(', ')} (GET /v1/providers lists them).`,
    details: { reason: 'unknown_provider' },
  });
}

export function registerProviderRoutes(app: Hono<DaemonEnvironment>, state: DaemonState): void {
  app.get('/v1/providers', async (context) => {
    const availability = await state.runtime.probeProviders({ timeoutMs: probeTimeoutMs });
    return context.json(
      {
        providers: state.runtime.providers.map((provider) => ({
          name: provider.name,
          capabilities: provider.capabilities,
          availability: availability[provider.name] ?? { available: false },
        })),
      },
      200,
    );
  });

  app.get('/v1/providers/:name/models', async (context) => {
    const name = context.req.param('name');
    // A provider that is not there is a missing resource (404), not a malformed request.
    if (!state.runtime.providerNames.includes(name)) throw unknownProvider(name, state.runtime.providerNames);
    // Reading the list starts an agent: a stopping daemon starts no new work (its runs may still drain).
    if (state.draining) throw daemonStopping();
    try {
      return context.json(await state.runtime.listModels(name), 200);
    } catch (error) {
      // Its agent was ended by the shutdown: the runtime's words ("create a new runtime") are not a client's to follow.
      if (state.draining && AgentError.isInstance(error) && error.code === 'runtime_stopped') throw daemonStopping();
      throw error;
    }
  });
}
