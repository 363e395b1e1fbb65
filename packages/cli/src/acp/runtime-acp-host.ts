import type { AcpHost } from '@tether/acp';
import { AgentError, type ProviderCapabilities } from '@tether/protocol';
import type { AgentRuntime } from '@tether/runtime';
import { surfaceWithReads } from './surface-with-reads.js';

/** Where a page starts: after this session in newest-first order (the runtime's listing order). */
interface PagePosition {
  readonly createdAt: string;
  readonly sessionId: string;
}

function encodeCursor(position: PagePosition): string {
  return Buffer.from(JSON.stringify([position.createdAt, position.sessionId])).toString('base64url');
}

function decodeCursor(cursor: string): PagePosition {
  try {
    const [createdAt, sessionId] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown[];
    if (typeof createdAt === 'string' && typeof sessionId === 'string') return { createdAt, sessionId };
  } catch {
    // Falls through to the refusal below.
  }
  throw new AgentError({
    code: 'invalid_command',
    message:
      'The session list cursor is not one this agent gave out. Use the nextCursor of a previous page, or leave it out.',
  });
}

/** The AcpHost of `tether acp` running Tether in this process. */
export function runtimeAcpHost(runtime: AgentRuntime): AcpHost {
  return surfaceWithReads(runtime, {
    async listSessionPage({ cursor, limit }) {
      const before = cursor === undefined ? undefined : decodeCursor(cursor);
      // One more than the page tells whether another page follows.
      const sessions = await runtime.listSessions({ limit: limit + 1, ...(before ? { before } : {}) });
      const page = sessions.slice(0, limit);
      const last = page.at(-1);
      return { sessions: page, nextCursor: sessions.length > limit && last ? encodeCursor(last) : null };
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
