import type { AcpHost } from '@tether/acp';
import type { TetherClient } from '@tether/client';
import { AgentError } from '@tether/protocol';
import { surfaceWithReads } from './surface-with-reads.js';

/** The AcpHost of `tether acp` bridging to a daemon: the client's surface, its pages and its providers. */
export function daemonAcpHost(client: TetherClient): AcpHost {
  return surfaceWithReads(client, {
    async listSessionPage({ cursor, limit }) {
      const page = await client.listSessions({ limit, ...(cursor === undefined ? {} : { before: cursor }) });
      return { sessions: page.sessions, nextCursor: page.next };
    },
    async providerCapabilities(provider) {
      // The daemon lists its default provider first.
      const providers = await client.getProviders();
      const found = providers.find((candidate) => provider === undefined || candidate.name === provider);
      if (!found)
        throw new AgentError({
          code: 'provider_unavailable',
          message: `The daemon has no provider "${provider ?? '(default)'}".`,
        });
      return found.capabilities;
    },
  });
}
