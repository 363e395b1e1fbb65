export { VERSION } from './version.js';
export { createTetherClient } from './tether-client.js';
export type { TetherClient, TetherClientOptions, CommandInput, SessionFilter, ListSessionsOptions } from './tether-client.js';
export type { SubscribeOptions, ConnectionState } from './event-subscription.js';
export type { ReconnectOptions } from './reconnect-backoff.js';
export type { SessionPage, ProviderInfo, DaemonHealth } from './daemon-responses.js';
