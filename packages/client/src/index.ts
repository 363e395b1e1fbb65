export { VERSION } from './version.js';
export { createTetherClient } from './tether-client.js';
// For a daemon choosing its port: one its clients (browsers, fetch) could never reach is refused there.
export { fetchBlockedPorts } from './blocked-ports.js';
export type { TetherClient, TetherClientOptions, SessionFilter, ListSessionsOptions } from './tether-client.js';
// Re-exported so an app needs one import; defined once, in the protocol.
export { AgentError } from '@tether/protocol';
export type {
  CommandInput,
  ErrorCode,
  InteractionAnswer,
  ProtocolEvent,
  SessionSnapshot,
  SubmitTurnReceipt,
} from '@tether/protocol';
export type { SubscribeOptions, ConnectionState } from './event-subscription.js';
export type { ReconnectOptions } from './reconnect-backoff.js';
export type { RequestOptions } from './request-deadline.js';
export type { SessionPage, ProviderInfo, DaemonHealth, DaemonStoreHealth } from './daemon-responses.js';
