import { AgentError } from '@tether/protocol';
import type { Hono } from 'hono';
import type { DaemonState } from '../daemon-state.js';
import type { DaemonEnvironment } from '../http/request-environment.js';
import { readJsonBody } from '../http/read-json-body.js';
import type { WebPush } from './web-push.js';

// A PushSubscription's JSON is well under 1 KiB; endpoints are at most 2,048 characters.
const maxSubscriptionBytes = 8 * 1024;

function pushOf(state: DaemonState): WebPush {
  if (state.webPush !== null) return state.webPush;
  throw new AgentError({
    code: 'capability_unsupported',
    message:
      'Web Push is off on this daemon. Turn it on with a contact for the push services: "webPush": {"subject": "mailto:you@example.com"} in the notification config (tether serve --notify-config), or notifications.webPush in startDaemon.',
    details: { reason: 'web_push_off' },
  });
}

/**
 * /v1/push/*, behind the bearer token like every /v1 route: the web UI reads whether push is on and
 * the daemon's VAPID public key, and registers (or forgets) its browser's push subscription (501
 * when push is off).
 */
export function registerPushRoutes(app: Hono<DaemonEnvironment>, state: DaemonState): void {
  // Whether push is on is part of the answer, not an error: the web UI asks on every load, and a
  // refusal there would be logged by the browser as a failed request each time.
  app.get('/v1/push/key', (context) =>
    context.json(
      state.webPush === null ? { enabled: false } : { enabled: true, publicKey: state.webPush.publicKey },
      200,
      { 'Cache-Control': 'no-store' },
    ),
  );
  app.post('/v1/push/subscriptions', async (context) => {
    const push = pushOf(state);
    const { id, created } = await push.subscribe(await readJsonBody(context.env.incoming, maxSubscriptionBytes));
    return context.json({ id }, created ? 201 : 200);
  });
  app.delete('/v1/push/subscriptions', async (context) => {
    const push = pushOf(state);
    const body = await readJsonBody(context.env.incoming, maxSubscriptionBytes);
    const endpoint = typeof body === 'object' && body !== null ? (body as { endpoint?: unknown }).endpoint : undefined;
    return context.json({ removed: await push.unsubscribe(endpoint) }, 200);
  });
}
