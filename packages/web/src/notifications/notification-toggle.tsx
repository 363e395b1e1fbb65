import { useEffect, useState } from 'react';
import {
  type PushAvailability,
  currentSubscription,
  disablePush,
  enablePush,
  pushAvailability,
  registerServiceWorker,
} from './push-registration.js';

type ToggleState =
  | { readonly kind: 'hidden' }
  | {
      readonly kind: 'ready';
      readonly key: string;
      readonly registration: ServiceWorkerRegistration;
      readonly subscription: PushSubscription | null;
    };

/**
 * The header's notifications switch: shown when the browser can receive Web Push and the daemon has
 * it on. On asks permission, subscribes and registers with the daemon; off unsubscribes.
 */
export function NotificationToggle({ token }: { readonly token: string }) {
  const [state, setState] = useState<ToggleState>({ kind: 'hidden' });
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);

  useEffect(() => {
    let stopped = false;
    (async () => {
      const availability: PushAvailability = await pushAvailability(token);
      if (availability.kind !== 'on') return;
      const registration = await registerServiceWorker();
      const subscription = await currentSubscription(registration, availability.key);
      if (!stopped) setState({ kind: 'ready', key: availability.key, registration, subscription });
    })().catch(() => {
      // No switch then: notifications stay what they were, everything else works.
    });
    return () => {
      stopped = true;
    };
  }, [token]);

  if (state.kind === 'hidden') return null;
  const on = state.subscription !== null;
  const toggle = async () => {
    setBusy(true);
    setProblem(null);
    try {
      if (state.subscription !== null) await disablePush(state.subscription, token);
      else await enablePush(state.registration, state.key, token);
      setState({ ...state, subscription: await currentSubscription(state.registration, state.key) });
    } catch (error) {
      setProblem(error instanceof Error ? error.message : String(error));
    } finally {
      setBusy(false);
    }
  };
  return (
    <span className="notification-toggle">
      <button type="button" aria-pressed={on} disabled={busy} onClick={() => void toggle()}>
        {on ? 'Notifications: on' : 'Notifications: off'}
      </button>
      {problem === null ? null : (
        <span role="status" className="notification-problem">
          {problem}
        </span>
      )}
    </span>
  );
}
