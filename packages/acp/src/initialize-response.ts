import { type InitializeRequest, type InitializeResponse, PROTOCOL_VERSION } from '@agentclientprotocol/sdk';
import type { ProviderCapabilities } from '@tether/protocol';

/**
 * The protocol version both sides speak (the client's, when this agent speaks it; else the newest
 * this agent speaks, for the client to decide) and only what works: sessions load, list, resume
 * and close; images where the provider takes them; embedded resources; MCP servers of every kind.
 */
export function initializeResponseOf(
  request: InitializeRequest,
  capabilities: Pick<ProviderCapabilities, 'images' | 'resume'>,
  version: string,
): InitializeResponse {
  return {
    protocolVersion: request.protocolVersion === PROTOCOL_VERSION ? request.protocolVersion : PROTOCOL_VERSION,
    agentCapabilities: {
      loadSession: true,
      promptCapabilities: { image: capabilities.images, audio: false, embeddedContext: true },
      mcpCapabilities: { http: true, sse: true },
      sessionCapabilities: {
        list: {},
        close: {},
        ...(capabilities.resume ? { resume: {} } : {}),
      },
    },
    agentInfo: { name: 'tether', title: 'Tether', version },
    authMethods: [],
  };
}
