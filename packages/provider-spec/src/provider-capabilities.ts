import type { ProviderCapabilities } from '@tether/protocol';

/**
 * What a provider can do, declared up front so a host (and the runtime) can decide before
 * calling. The wire shape lives in the protocol (GET /v1/providers carries it).
 */
export type AgentProviderV1Capabilities = Readonly<ProviderCapabilities>;
