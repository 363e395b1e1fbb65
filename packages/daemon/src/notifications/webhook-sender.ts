import { VERSION } from '../version.js';
import { signNotification, signatureHeader, timestampHeader } from './notification-signature.js';
import { type NotificationSender, attemptResultOf } from './receiver-queue.js';

/** A webhook receiver's sender: the JSON body POSTed as it is, signed with the receiver's secret. */
export function webhookSender(url: URL, secret: string): NotificationSender {
  return async (notification, signal) => {
    const timestamp = String(Math.floor(Date.now() / 1000));
    const response = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': `tether/${VERSION}`,
        [timestampHeader]: timestamp,
        [signatureHeader]: signNotification(secret, timestamp, notification.body),
        'X-Tether-Event': notification.kind,
        'X-Tether-Delivery': notification.id,
      },
      body: notification.body,
      // A redirect could carry the body (and its links) somewhere the owner never named.
      redirect: 'manual',
      signal,
    });
    await response.body?.cancel().catch(() => undefined);
    return attemptResultOf(response.status);
  };
}
