/** The daemon's Web Push routes (docs/notifications.md), called with the tab's token. */

export type PushAvailability = { readonly kind: 'unsupported' | 'off' } | { readonly kind: 'on'; readonly key: string };

const serviceWorkerPath = '/service-worker.js';

function authorized(token: string, body?: unknown): RequestInit {
  return {
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  };
}

/** Whether this browser can and the daemon does: no service worker or Push API, or a daemon with Web Push off. */
export async function pushAvailability(token: string): Promise<PushAvailability> {
  if (!('serviceWorker' in navigator) || !('PushManager' in window) || !('Notification' in window))
    return { kind: 'unsupported' };
  const response = await fetch('/v1/push/key', authorized(token));
  if (!response.ok) throw new Error(`The daemon answered ${response.status} for its push key.`);
  const answer = (await response.json()) as { enabled: false } | { enabled: true; publicKey: string };
  return answer.enabled ? { kind: 'on', key: answer.publicKey } : { kind: 'off' };
}

export function registerServiceWorker(): Promise<ServiceWorkerRegistration> {
  return navigator.serviceWorker.register(serviceWorkerPath, { scope: '/' });
}

function keyBytes(base64Url: string): Uint8Array<ArrayBuffer> {
  const base64 = base64Url.replace(/-/g, '+').replace(/_/g, '/');
  const binary = atob(base64 + '='.repeat((4 - (base64.length % 4)) % 4));
  return Uint8Array.from(binary, (character) => character.charCodeAt(0));
}

function sameKey(subscription: PushSubscription, key: string): boolean {
  const current = subscription.options.applicationServerKey;
  if (current === null) return false;
  const expected = keyBytes(key);
  const given = new Uint8Array(current);
  return given.length === expected.length && given.every((byte, index) => byte === expected[index]);
}

/** This browser's subscription to the daemon's key, if it has one (one made for an older key does not count). */
export async function currentSubscription(
  registration: ServiceWorkerRegistration,
  key: string,
): Promise<PushSubscription | null> {
  const subscription = await registration.pushManager.getSubscription();
  return subscription !== null && sameKey(subscription, key) ? subscription : null;
}

/** Asks permission, subscribes with the daemon's key and registers the subscription with the daemon. */
export async function enablePush(registration: ServiceWorkerRegistration, key: string, token: string): Promise<void> {
  if ((await Notification.requestPermission()) !== 'granted')
    throw new Error('The browser did not allow notifications for this page (see its site settings).');
  const stale = await registration.pushManager.getSubscription();
  if (stale !== null && !sameKey(stale, key)) await stale.unsubscribe();
  let subscription: PushSubscription;
  try {
    subscription = await registration.pushManager.subscribe({
      userVisibleOnly: true,
      applicationServerKey: keyBytes(key),
    });
  } catch (error) {
    throw new Error(
      `The browser could not subscribe at its push service (${error instanceof Error ? error.message : String(error)}).`,
    );
  }
  const response = await fetch('/v1/push/subscriptions', {
    method: 'POST',
    ...authorized(token, subscription.toJSON()),
  });
  if (!response.ok) {
    await subscription.unsubscribe().catch(() => false);
    const refusal = (await response.json().catch(() => null)) as { error?: { message?: string } } | null;
    throw new Error(refusal?.error?.message ?? `The daemon answered ${response.status}.`);
  }
}

/** Forgets the subscription at the daemon, then in the browser. */
export async function disablePush(subscription: PushSubscription, token: string): Promise<void> {
  const response = await fetch('/v1/push/subscriptions', {
    method: 'DELETE',
    ...authorized(token, { endpoint: subscription.endpoint }),
  });
  if (!response.ok) throw new Error(`The daemon answered ${response.status}.`);
  await subscription.unsubscribe();
}
