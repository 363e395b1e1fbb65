import type { AcpHost } from '@tether/acp';
import { AgentError, type ProviderCapabilities } from '@tether/protocol';
import { type AgentRuntime, decodeSessionCursor, encodeSessionCursor } from '@tether/runtime';
import { surfaceWithReads } from './surface-with-reads.js';

/** The AcpHost of `tether acp` running Tether in this process. */
export function runtimeAcpHost(runtime: AgentRuntime): AcpHost {
  return surfaceWithReads(runtime, {
    async listSessionPage({ cursor, limit }) {
      const before =
        cursor === undefined
          ? undefined
          : decodeSessionCursor(
              cursor,
              'The session list cursor is not one this agent gave out. Use the nextCursor of a previous page, or leave it out.',
            );
      // One more than the page tells whether another page follows.
      const sessions = await runtime.listSessions({ limit: limit + 1, ...(before ? { before } : {}) });
      const page = sessions.slice(0, limit);
      const last = page.at(-1);
      return { sessions: page, nextCursor: sessions.length > limit && last ? encodeSessionCursor(last) : null };
    },
    async providerCapabilities(provider) {
      const found = runtime.providers.find((candidate) => provider === undefined || candidate.name === provider);
      if (!found)
        throw new AgentError({
          code: 'provider_unavailable',
          message: `This Tether has no provider "${provider}".`,
        });
      return found.capabilities as ProviderCapabilities;
    },
  });
}
