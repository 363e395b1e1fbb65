/**
 * What tests of the agent need: the SDK's client side at the version the agent is built on (the
 * repository root holds an older SDK for acpx, which tests would otherwise resolve).
 */
export { PROTOCOL_VERSION, client, methods, ndJsonStream } from '@agentclientprotocol/sdk';
export type {
  ClientCapabilities,
  ClientContext,
  ContentBlock,
  CreateElicitationRequest,
  CreateElicitationResponse,
  PromptResponse,
  RequestPermissionRequest,
  RequestPermissionResponse,
  SessionNotification,
  SessionUpdate,
} from '@agentclientprotocol/sdk';
