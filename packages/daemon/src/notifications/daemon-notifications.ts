import type { AgentRuntime } from '@tether/runtime';
import type { DaemonLogger } from '../logging/create-logger.js';
import type { ResolvedNotifications } from './notification-config.js';
import { NotificationMetrics } from './notification-metrics.js';
import { type NotificationOptions, defaultLinkTtlMs } from './notification-options.js';
import { ensureNotificationSecret } from './notification-secret.js';
import { Notifier } from './notifier.js';
import { OneTimeLinks } from './one-time-links.js';

/** What the daemon holds of notifications: the links its route answers, and the notifier (null with no receivers). */
export interface DaemonNotifications {
  readonly links: OneTimeLinks;
  readonly metrics: NotificationMetrics | null;
  start(baseUrl: string): void;
  close(): void;
}

/**
 * The notifier over the runtime, for receivers already checked (resolveNotifications, before anything
 * was opened). Receivers without their own secret sign with the data dir's, whose file (never its
 * content) the log names.
 */
export async function createDaemonNotifications(parts: {
  readonly options: NotificationOptions | undefined;
  readonly resolved: ResolvedNotifications;
  readonly dataDir: string;
  readonly runtime: Pick<AgentRuntime, 'observe' | 'getSession'>;
  readonly logger: DaemonLogger;
  readonly servesWebUi: boolean;
}): Promise<DaemonNotifications> {
  const links = new OneTimeLinks(parts.options?.linkTtlMs ?? defaultLinkTtlMs);
  const { receivers, settings } = parts.resolved;
  if (receivers.length === 0) return { links, metrics: null, start: () => undefined, close: () => undefined };
  const shared = receivers.some((receiver) => receiver.secret === null)
    ? await ensureNotificationSecret(parts.dataDir)
    : null;
  const metrics = new NotificationMetrics(receivers.map((receiver) => receiver.name));
  const notifier = new Notifier({
    runtime: parts.runtime,
    receivers: receivers.map((receiver) => ({
      ...receiver,
      signingSecret: receiver.secret ?? (shared?.secret as string),
    })),
    links,
    metrics,
    settings,
    logger: parts.logger,
    servesWebUi: parts.servesWebUi,
  });
  return {
    links,
    metrics,
    start(baseUrl) {
      notifier.start(baseUrl);
      parts.logger.info(
        {
          receivers: receivers.map((receiver) => receiver.name),
          linkBase: baseUrl,
          ...(shared === null ? {} : { secretFile: shared.filePath }),
        },
        'notifications on',
      );
    },
    close: () => notifier.close(),
  };
}
