import type { Hono } from 'hono';
import type { DaemonEnvironment } from '../http/request-environment.js';
import type { DaemonState } from '../daemon-state.js';

// Bounds how long a listing waits for an agent binary that does not answer `--version`.
const probeTimeoutMs = 5_000;

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
}
