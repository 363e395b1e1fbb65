export { VERSION } from './version.js';
export { startDaemon } from './start-daemon.js';
export type { Daemon, DaemonOptions } from './daemon-options.js';
export type { DaemonLogger } from './logging/create-logger.js';
export { readDaemonInfo } from './lifecycle/daemon-info.js';
export type { DaemonInfo } from './lifecycle/daemon-info.js';
export { readToken, rotateToken } from './auth/token-file.js';
