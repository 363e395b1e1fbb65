import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Daemon } from '@tether/daemon';
import type { ClaudeTestEnvironment } from '@tether/testkit';
import type { Browser, CDPSession, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { dataDirOf } from '../daemon/daemon-test-helpers.js';
import { describeInBrowser, launchBrowser, openConnectedPage, startWebDaemon } from './browser-harness.js';

interface ShownNotification {
  title: string;
  body: string;
  tag: string;
  actions: Array<{ action: string; title: string }>;
  data: { sessionId?: string; links?: Record<string, string> };
}

// The tests' TypeScript has no DOM service worker types; what the page code below uses of them.
interface PageNavigator {
  readonly serviceWorker: {
    readonly ready: Promise<{
      scope: string;
      active: {
        scriptURL: string;
        state: string;
        addEventListener(type: 'statechange', listener: () => void): void;
      } | null;
      getNotifications(): Promise<
        Array<Omit<ShownNotification, 'actions'> & { actions?: ShownNotification['actions'] }>
      >;
    }>;
  };
}

/** The service worker's registration id, as the DevTools protocol names it once the worker is up. */
function registrationIdOf(cdp: CDPSession, scope: string): Promise<string> {
  return new Promise((resolve) => {
    cdp.on('ServiceWorker.workerRegistrationUpdated', ({ registrations }) => {
      const found = registrations.find((registration) => registration.scopeURL === scope && !registration.isDeleted);
      if (found) resolve(found.registrationId);
    });
  });
}

/**
 * The notifications the page's worker displayed, as DevTools' background-services log reports them
 * ("Notification displayed", recorded from now on): `shown(count)` resolves once that many were.
 */
async function displayedNotifications(cdp: CDPSession): Promise<{ shown(count: number): Promise<void> }> {
  let displayed = 0;
  const waiters: Array<{ count: number; resolve: () => void }> = [];
  cdp.on('BackgroundService.backgroundServiceEventReceived', ({ backgroundServiceEvent }) => {
    if (
      backgroundServiceEvent.service !== 'notifications' ||
      backgroundServiceEvent.eventName !== 'Notification displayed'
    )
      return;
    displayed += 1;
    for (const waiter of waiters.filter((candidate) => candidate.count <= displayed)) {
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve();
    }
  });
  await cdp.send('BackgroundService.setRecording', { shouldRecord: true, service: 'notifications' });
  await cdp.send('BackgroundService.startObserving', { service: 'notifications' });
  return {
    shown: (count) =>
      count <= displayed ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ count, resolve })),
  };
}

function shownNotifications(page: Page): Promise<ShownNotification[]> {
  return page.evaluate(async () => {
    const registration = await (navigator as unknown as PageNavigator).serviceWorker.ready;
    return (await registration.getNotifications()).map((notification) => ({
      title: notification.title,
      body: notification.body,
      tag: notification.tag,
      actions: [...(notification.actions ?? [])].map(({ action, title }) => ({ action, title })),
      data: notification.data as ShownNotification['data'],
    }));
  });
}

describeInBrowser('the web UI: Web Push in a real browser', () => {
  let environment: ClaudeTestEnvironment;
  let daemon: Daemon;
  let browser: Browser;
  beforeAll(async () => {
    ({ environment, daemon } = await startWebDaemon({
      notifications: { webPush: { subject: 'mailto:ops@example.com' } },
    }));
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await daemon?.close();
    await environment?.cleanup();
  });

  it('registers the service worker, which shows a pushed notification with the approval actions', async () => {
    const { context, page, problems } = await openConnectedPage(browser, daemon);
    try {
      const origin = new URL(daemon.url).origin;
      await context.grantPermissions(['notifications'], { origin });
      const cdp = await context.newCDPSession(page);
      const registered = registrationIdOf(cdp, `${origin}/`);
      await cdp.send('ServiceWorker.enable');
      const notifications = await displayedNotifications(cdp);

      // The switch appears once the daemon said Web Push is on and the worker is registered, at scope "/".
      await page.getByRole('button', { name: 'Notifications: off' }).waitFor();
      // `ready` resolves while the worker may still be activating, and a push delivered then can be
      // lost: wait until it is activated.
      const worker = await page.evaluate(async () => {
        const registration = await (navigator as unknown as PageNavigator).serviceWorker.ready;
        const active = registration.active!;
        if (active.state !== 'activated')
          await new Promise<void>((resolve) =>
            active.addEventListener('statechange', () => active.state === 'activated' && resolve()),
          );
        return { scope: registration.scope, script: active.scriptURL };
      });
      expect(worker).toEqual({ scope: `${origin}/`, script: `${origin}/service-worker.js` });
      const registrationId = await registered;

      // A push as the daemon sends it (the notification JSON); its text is the agent's, shown as text.
      const sessionId = `ses_${'a'.repeat(32)}`;
      const body = {
        version: 1,
        id: 'ntf_1',
        kind: 'interaction_requested',
        at: new Date().toISOString(),
        session: { id: sessionId, title: 'Fix <b>the</b> login test', workspacePath: '/tmp/app' },
        runId: 'run_1',
        interaction: { ref: 'int_1', kind: 'approval', tool: 'Bash', category: 'command', summary: 'Run the suite' },
        links: {
          open: `${origin}/sessions/${sessionId}`,
          approve: `${origin}/v1/links/${'A'.repeat(43)}`,
          deny: `${origin}/v1/links/${'D'.repeat(43)}`,
        },
      };
      await cdp.send('ServiceWorker.deliverPushMessage', { origin, registrationId, data: JSON.stringify(body) });
      await notifications.shown(1);
      expect(await shownNotifications(page)).toEqual([
        {
          title: 'Needs you: Fix <b>the</b> login test',
          body: 'Bash: Run the suite',
          tag: 'int_1',
          actions: [
            { action: 'approve', title: 'Approve once…' },
            { action: 'deny', title: 'Deny…' },
          ],
          data: { sessionId, links: body.links },
        },
      ]);

      // A finished run: no actions; a garbled push shows nothing.
      await cdp.send('ServiceWorker.deliverPushMessage', { origin, registrationId, data: 'not json' });
      await cdp.send('ServiceWorker.deliverPushMessage', {
        origin,
        registrationId,
        data: JSON.stringify({
          ...body,
          id: 'ntf_2',
          kind: 'run_failed',
          interaction: undefined,
          run: { outcome: 'failed', errorCode: 'provider_api_error' },
          links: { open: body.links.open },
        }),
      });
      await notifications.shown(2);
      expect((await shownNotifications(page)).find((shown) => shown.tag === 'ntf_2')).toEqual({
        title: 'Failed: Fix <b>the</b> login test',
        body: 'The run failed (provider_api_error).',
        tag: 'ntf_2',
        actions: [],
        data: { sessionId, links: { open: body.links.open } },
      });

      // Turning notifications on subscribes at the browser's push service, which a test browser cannot
      // (its contexts are incognito, where Chromium has no Push API, and there is no network): the
      // switch says so, stays off, and the daemon registered nothing.
      await page.getByRole('button', { name: 'Notifications: off' }).click();
      await page
        .getByRole('status')
        .filter({ hasText: 'The browser could not subscribe at its push service' })
        .waitFor();
      expect(await page.getByRole('button', { name: 'Notifications: off' }).isEnabled()).toBe(true);
      expect(existsSync(path.join(dataDirOf(environment), 'web-push-subscriptions.json'))).toBe(false);
      // Chromium logs why it refused; anything else logged is a problem.
      const incognitoRefusal = /does not support the Push API in incognito mode/;
      expect(problems.foreignRequests).toEqual([]);
      expect(problems.errors.filter((error) => !incognitoRefusal.test(error))).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
