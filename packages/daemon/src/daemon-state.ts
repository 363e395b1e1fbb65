import type { AgentRuntime, TetherStore } from '@tether/runtime';
import type { OriginPolicy } from './auth/origin-check.js';
import type { TokenGuard } from './auth/token-guard.js';
import type { DaemonLogger } from './logging/create-logger.js';
import type { RefusedRequestLog } from './logging/refused-request-log.js';
import type { DaemonMetrics } from './metrics/daemon-metrics.js';
import type { OneTimeLinks } from './notifications/one-time-links.js';
import type { WebPush } from './notifications/web-push.js';
import type { OutboxLimits } from './streaming/bounded-outbox.js';
import type { ConnectionRegistry } from './streaming/connection-registry.js';
import type { StaticFiles } from './static/static-files.js';

/** What the routes, middleware and the socket server share. */
export interface DaemonState {
  readonly runtime: AgentRuntime;
  /** The runtime's store: /health asks it whether it reaches its database. */
  readonly store: TetherStore;
  readonly tokens: TokenGuard;
  /** Set once the port is known (port 0 picks one at listen time); no request arrives before. */
  policy: OriginPolicy;
  readonly metrics: DaemonMetrics;
  readonly connections: ConnectionRegistry;
  readonly logger: DaemonLogger;
  /** The rate-limited log of the refusals anyone can cause at will (401, 403, upgrades, sockets without the token). */
  readonly refusals: RefusedRequestLog;
  readonly subscriberLimits: OutboxLimits;
  readonly pingIntervalMs: number;
  /** The web UI's built files, served at every non-API path; null when the daemon serves no UI. */
  readonly staticFiles: StaticFiles | null;
  /** Notifications' one-time answer links (/v1/links/<token>); empty without notifications. */
  readonly links: OneTimeLinks;
  /** Web Push's key and browsers (/v1/push/*); null when it is off. */
  readonly webPush: WebPush | null;
  /** True from the start of close(): no new work, no new connections. */
  draining: boolean;
}
