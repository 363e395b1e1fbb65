import type { Daemon, DaemonOptions } from './daemon-options.js';

export { VERSION } from './version.js';
export type { Daemon, DaemonOptions } from './daemon-options.js';
export { defaultShutdownGraceMs } from './daemon-options.js';
export type { DaemonLogger } from './logging/create-logger.js';
export type {
  NotificationKind,
  NotificationOptions,
  NotificationReceiver,
  WebPushOptions,
} from './notifications/notification-options.js';
export { readDaemonInfo } from './lifecycle/daemon-info.js';
export type { DaemonInfo } from './lifecycle/daemon-info.js';
export { readToken, rotateToken, tokenFilePath } from './auth/token-file.js';
export { writePrivateFile } from './auth/private-files.js';
export { isLoopbackHost } from './auth/loopback-host.js';

/**
 * Starts the daemon. Its server (HTTP, WebSocket, logging, metrics) is loaded here, not with this
 * package: local commands import it only to find a running daemon (readDaemonInfo, readToken).
 */
export async function startDaemon(options: DaemonOptions): Promise<Daemon> {
  const server = await import('./start-daemon.js');
  return server.startDaemon(options);
}
