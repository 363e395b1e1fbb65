import type { DaemonLogger } from '../logging/create-logger.js';
import type { ResolvedWebPush } from './notification-config.js';
import type { Notifier } from './notifier.js';
import { pushSender } from './push-sender.js';
import { type PushSubscription, PushSubscriptionStore } from './push-subscriptions.js';
import { type VapidKeys, ensureVapidKeys } from './vapid-keys.js';

/** A subscription's receiver name: its label in /v1/metrics and the log (never the endpoint, a capability URL). */
const receiverName = (subscription: PushSubscription) => `push-${subscription.id.slice(5, 17)}`;

/**
 * Web Push: the browsers registered through the web UI, each one more receiver of the notifier
 * (same events, bodies, queue, retries and metrics as a webhook; only the sending differs).
 */
export class WebPush {
  private readonly keys: VapidKeys;
  private readonly store: PushSubscriptionStore;
  private readonly settings: ResolvedWebPush;
  private readonly logger: DaemonLogger;
  private notifier: Notifier | null = null;

  private constructor(keys: VapidKeys, store: PushSubscriptionStore, settings: ResolvedWebPush, logger: DaemonLogger) {
    this.keys = keys;
    this.store = store;
    this.settings = settings;
    this.logger = logger;
  }

  static async open(dataDir: string, settings: ResolvedWebPush, logger: DaemonLogger): Promise<WebPush> {
    const store = PushSubscriptionStore.open(dataDir, {
      maxSubscriptions: settings.maxSubscriptions,
      allowLoopbackHttp: settings.allowLoopbackHttpEndpoints,
    });
    return new WebPush(await ensureVapidKeys(dataDir), store, settings, logger);
  }

  /** The application server key the web UI subscribes with (base64url, uncompressed P-256). */
  get publicKey(): string {
    return this.keys.publicKey;
  }

  get keyFile(): string {
    return this.keys.filePath;
  }

  get subscriptionCount(): number {
    return this.store.list().length;
  }

  /** Every stored subscription becomes a receiver of this notifier, and so does every one registered later. */
  attach(notifier: Notifier): void {
    this.notifier = notifier;
    for (const subscription of this.store.list()) this.receive(subscription);
  }

  async subscribe(input: unknown): Promise<{ id: string; created: boolean }> {
    const { subscription, created } = await this.store.add(input);
    this.receive(subscription);
    this.logger.info({ receiver: receiverName(subscription), created }, 'a browser registered for notifications');
    return { id: subscription.id, created };
  }

  async unsubscribe(endpoint: unknown): Promise<boolean> {
    const removed = await this.store.removeEndpoint(endpoint);
    if (removed === null) return false;
    this.notifier?.removeReceiver(receiverName(removed));
    this.logger.info({ receiver: receiverName(removed) }, 'a browser turned notifications off');
    return true;
  }

  private receive(subscription: PushSubscription): void {
    const name = receiverName(subscription);
    this.notifier?.addReceiver({
      name,
      kinds: this.settings.kinds,
      sessionWaitingMs: this.settings.sessionWaitingMs,
      send: pushSender({
        subscription,
        keys: this.keys,
        subject: this.settings.subject,
        ttlSeconds: this.settings.ttlSeconds,
        onGone: () => {
          this.notifier?.removeReceiver(name);
          this.store
            .remove(subscription.id)
            .then(() => this.logger.info({ receiver: name }, 'a push subscription is gone (404/410): removed'))
            .catch((error: unknown) =>
              this.logger.error(
                { receiver: name, errorName: error instanceof Error ? error.name : typeof error },
                'a gone push subscription could not be removed from the data dir',
              ),
            );
        },
      }),
    });
  }
}
