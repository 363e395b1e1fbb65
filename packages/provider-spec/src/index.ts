export type { AgentProviderV1, AgentProviderV1ProcessRecord } from './agent-provider.js';
export type { AgentProviderV1Availability } from './provider-availability.js';
export type { AgentProviderV1Capabilities } from './provider-capabilities.js';
export type { AgentProviderV1Part, AgentProviderV1PartType } from './provider-part.js';
export type {
  AgentProviderV1Control,
  AgentProviderV1FileRewind,
  AgentProviderV1InputPart,
  AgentProviderV1Session,
  AgentProviderV1SessionOptions,
  AgentProviderV1StopOptions,
  AgentProviderV1StopReason,
  AgentProviderV1Turn,
} from './provider-session.js';

export const VERSION = '0.1.0';
export const SPECIFICATION_VERSION = 'agent-provider-v1';
