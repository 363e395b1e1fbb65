import { VERSION } from '../version.js';
import type { NotificationKind } from './notification-options.js';
import type { PushSubscription } from './push-subscriptions.js';
import { type NotificationSender, attemptResultOf } from './receiver-queue.js';
import { type VapidKeys, vapidAuthorization } from './vapid-keys.js';
import { encryptPushPayload, maxPushPlaintextBytes } from './web-push-encryption.js';

// What needs a person goes out at once even to a phone saving its battery (RFC 8030 §5.3).
const urgencyOf: Record<NotificationKind, 'high' | 'normal'> = {
  interaction_requested: 'high',
  session_waiting: 'high',
  run_failed: 'normal',
  run_completed: 'normal',
};

/**
 * The notification's JSON as it fits one push message: whole when it fits (nearly always); else the
 * bulky parts (questions' text, the workspace path) give way first, marked `truncated`, and the
 * links, which the page needs to act, stay.
 */
export function pushPlaintext(body: string): Buffer {
  const whole = Buffer.from(body, 'utf8');
  if (whole.length <= maxPushPlaintextBytes) return whole;
  const parsed = JSON.parse(body) as {
    interaction?: { questions?: unknown };
    session: { workspacePath: string | null; title: string | null };
    truncated?: boolean;
  };
  parsed.truncated = true;
  if (parsed.interaction?.questions !== undefined) delete parsed.interaction.questions;
  parsed.session.workspacePath = null;
  const shorter = Buffer.from(JSON.stringify(parsed), 'utf8');
  if (shorter.length <= maxPushPlaintextBytes) return shorter;
  parsed.session.title = null;
  return Buffer.from(JSON.stringify(parsed), 'utf8');
}

export interface PushSenderParts {
  readonly subscription: PushSubscription;
  readonly keys: VapidKeys;
  readonly subject: string;
  readonly ttlSeconds: number;
  /** The push service said the subscription is gone (404/410): the browser unsubscribed or the grant expired. */
  readonly onGone: () => void;
}

/** A push subscription's sender: the body encrypted for that browser (RFC 8291), POSTed to its push service with a VAPID token (RFC 8292). */
export function pushSender(parts: PushSenderParts): NotificationSender {
  const endpoint = new URL(parts.subscription.endpoint);
  const userAgentPublicKey = Buffer.from(parts.subscription.keys.p256dh, 'base64url');
  const authSecret = Buffer.from(parts.subscription.keys.auth, 'base64url');
  return async (notification, signal) => {
    const message = encryptPushPayload({ plaintext: pushPlaintext(notification.body), userAgentPublicKey, authSecret });
    const response = await fetch(endpoint, {
      method: 'POST',
      headers: {
        authorization: vapidAuthorization(parts.keys, endpoint, parts.subject),
        'content-encoding': 'aes128gcm',
        'content-type': 'application/octet-stream',
        ttl: String(parts.ttlSeconds),
        urgency: urgencyOf[notification.kind as NotificationKind] ?? 'normal',
        'user-agent': `tether/${VERSION}`,
      },
      body: message,
      redirect: 'manual',
      signal,
    });
    await response.body?.cancel().catch(() => undefined);
    if (response.status === 404 || response.status === 410) {
      parts.onGone();
      return 'refused';
    }
    return attemptResultOf(response.status);
  };
}
