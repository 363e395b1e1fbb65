import { rm } from 'node:fs/promises';
import type { Browser } from 'playwright-core';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { describeInBrowser, launchBrowser } from '../web/browser-harness.js';
import { daemonPerTest } from './daemon-test-helpers.js';
import { TestReceiver } from './notifications-test-receiver.js';
import { startApprovalRun, webDirectory } from './notifications-test-session.js';

const { start } = daemonPerTest();
const receivers: TestReceiver[] = [];
const temporaryDirectories: string[] = [];
let browser: Browser;

beforeAll(async () => {
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
});

afterEach(async () => {
  await Promise.all(receivers.splice(0).map((receiver) => receiver.close()));
  await Promise.all(temporaryDirectories.splice(0).map((directory) => rm(directory, { recursive: true, force: true })));
});

describeInBrowser("a one-time link's page in a real browser", () => {
  // The page's form POST is a navigation: under `Referrer-Policy: no-referrer` Chromium sends it
  // with `Origin: null`, which the origin check refuses (403), so the button never answered.
  it('approves with its button: the form POST carries an origin the daemon accepts, and the run goes on', async () => {
    const hook = await TestReceiver.start();
    receivers.push(hook);
    const { environment, daemon, api } = await start({
      staticDirectory: await webDirectory(temporaryDirectories),
      notifications: { receivers: [{ url: hook.url }] },
    });
    const { sessionId, runId } = await startApprovalRun(environment, api);
    const asked = await hook.waitFor((notification) => notification.body.kind === 'interaction_requested');
    const { approve } = asked.body.links as { approve: string };

    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      const origins: (string | undefined)[] = [];
      page.on('request', (request) => {
        if (request.method() === 'POST') origins.push(request.headers()['origin']);
      });
      const shown = await page.goto(approve);
      expect(shown?.status()).toBe(200);
      expect(shown?.headers()['referrer-policy']).toBe('same-origin');
      // The approver sees what would run, not only how the model describes it.
      expect(await page.locator('pre').textContent()).toBe('echo hi > approved.txt');
      await page.getByText('How the agent describes it (its own words, not checked): Write a file').waitFor();
      const [answered] = await Promise.all([
        page.waitForResponse((response) => response.request().method() === 'POST'),
        page.getByRole('button', { name: 'Approve once' }).click(),
      ]);
      expect(origins).toEqual([daemon.url]);
      expect(answered.status()).toBe(200);
      await page.getByText('Approved once. The agent continues.').waitFor();
    } finally {
      await context.close();
    }

    expect(await daemon.runtime.waitForRun(runId)).toMatchObject({ outcome: 'succeeded' });
    const settled = (await daemon.runtime.readEvents(sessionId)).filter(
      (event) => event.type === 'interaction.settled',
    );
    expect(settled).toMatchObject([{ outcome: 'approved', answer: { decision: 'approve', scope: 'once' } }]);
  });
});
