import type { ProtocolEvent } from '@tether/protocol';
import type { AgentRuntime } from '@tether/runtime';
import type { DaemonLogger } from '../logging/create-logger.js';
import type { ResolvedNotifications } from './notification-config.js';
import { NotificationMetrics } from './notification-metrics.js';
import { type NotificationOptions, defaultLinkTtlMs } from './notification-options.js';
import { ensureNotificationSecret } from './notification-secret.js';
import { Notifier } from './notifier.js';
import { OneTimeLinks } from './one-time-links.js';
import { WebPush } from './web-push.js';
import { webhookSender } from './webhook-sender.js';

/** What the daemon holds of notifications: the links its route answers, Web Push (null when off), and the notifier. */
export interface DaemonNotifications {
  readonly links: OneTimeLinks;
  readonly metrics: NotificationMetrics | null;
  readonly webPush: WebPush | null;
  /** The file of the secret that signs for receivers without their own; null when none signs with it. */
  readonly secretFile: string | null;
  /** Starts notifying, beginning with `earlier`: what the runtime published before (as it loaded). */
  start(baseUrl: string, earlier?: readonly ProtocolEvent[]): void;
  close(): void;
}

/**
 * The notifier over the runtime, for receivers already checked (resolveNotifications, before anything
 * was opened). Receivers without their own secret sign with the data dir's, whose file (never its
 * content) the log names. With Web Push on, every registered browser is one more receiver.
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
  const pushSettings = parts.resolved.webPush;
  if (receivers.length === 0 && pushSettings === null)
    return { links, metrics: null, webPush: null, secretFile: null, start: () => undefined, close: () => undefined };
  const shared = receivers.some((receiver) => receiver.secret === null)
    ? await ensureNotificationSecret(parts.dataDir)
    : null;
  const webPush = pushSettings === null ? null : await WebPush.open(parts.dataDir, pushSettings, parts.logger);
  const metrics = new NotificationMetrics(receivers.map((receiver) => receiver.name));
  const notifier = new Notifier({
    runtime: parts.runtime,
    receivers: receivers.map((receiver) => ({
      name: receiver.name,
      kinds: receiver.kinds,
      sessionWaitingMs: receiver.sessionWaitingMs,
      send: webhookSender(receiver.url, receiver.secret ?? (shared?.secret as string)),
    })),
    laterWaitingThresholdsMs:
      pushSettings?.kinds.has('session_waiting') === true ? [pushSettings.sessionWaitingMs] : [],
    links,
    metrics,
    settings,
    logger: parts.logger,
    servesWebUi: parts.servesWebUi,
  });
  webPush?.attach(notifier);
  return {
    links,
    metrics,
    webPush,
    secretFile: shared?.filePath ?? null,
    start(baseUrl, earlier = []) {
      notifier.start(baseUrl, earlier);
      parts.logger.info(
        {
          receivers: receivers.map((receiver) => receiver.name),
          linkBase: baseUrl,
          ...(shared === null ? {} : { secretFile: shared.filePath }),
          ...(webPush === null
            ? {}
            : { webPushKeyFile: webPush.keyFile, pushSubscriptions: webPush.subscriptionCount }),
        },
        'notifications on',
      );
    },
    close: () => notifier.close(),
  };
}
