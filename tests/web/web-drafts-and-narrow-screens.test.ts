import { holdReply, textReply } from '@tether/fake-anthropic-api';
import type { Page } from 'playwright-core';
import { expect, it } from 'vitest';
import {
  browserSuite,
  conversationText,
  describeInBrowser,
  occurrences,
  openSessionInPage,
  sendTurn,
  waitForRunEnd,
} from './browser-harness.js';

/** Every console error the page logs, the browser's own failed-request lines included. */
function consoleErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  return errors;
}

describeInBrowser('the web UI: drafts, control reports and narrow screens in a real browser', () => {
  const suite = browserSuite();

  const messageField = (page: Page) => page.getByLabel('Message', { exact: true });
  const openFromList = async (page: Page, sessionId: string) => {
    await page.locator(`a[href="/sessions/${sessionId}"]`).click();
    await page.waitForURL(new RegExp(`/sessions/${sessionId}$`));
  };

  it('with Web Push off, loading the page logs no error: the key route says push is off', async () => {
    const page = await suite.connectedPage();
    const errors = consoleErrors(page);
    // Read as each answer arrives: the first page's may still be in flight when the reload drops it.
    const answers: { status: number; body: unknown }[] = [];
    page.on('response', (response) => {
      if (new URL(response.url()).pathname !== '/v1/push/key') return;
      void response.json().then(
        (body: unknown) => answers.push({ status: response.status(), body }),
        () => undefined,
      );
    });
    await page.reload();
    await page.getByRole('navigation', { name: 'Sessions' }).waitFor();
    await expect.poll(() => answers.length).toBeGreaterThan(0);
    expect(errors).toEqual([]);
    expect(answers.at(-1)).toEqual({ status: 200, body: { enabled: false } });
    expect(await page.getByRole('button', { name: /^Notifications/ }).count()).toBe(0);
  });

  it("keeps each session's draft while the reader is elsewhere and across a reload, and sends it nowhere", async () => {
    const page = await suite.connectedPage();
    const sentBodies: string[] = [];
    page.on('request', (request) => sentBodies.push(request.postData() ?? ''));
    const first = await openSessionInPage(page, suite.environment.workspace);
    await messageField(page).fill('Half a thought for the first session');
    const second = await openSessionInPage(page, suite.environment.workspace);
    expect(await messageField(page).inputValue()).toBe('');
    await messageField(page).fill('Another for the second');

    await openFromList(page, first);
    expect(await messageField(page).inputValue()).toBe('Half a thought for the first session');
    await openFromList(page, second);
    expect(await messageField(page).inputValue()).toBe('Another for the second');
    await page.reload();
    await messageField(page).waitFor();
    expect(await messageField(page).inputValue()).toBe('Another for the second');
    expect(sentBodies.filter((body) => body.includes('Half a thought') || body.includes('Another for'))).toEqual([]);
    expect(await page.evaluate('localStorage.length')).toBe(0);

    // Sent, it is no draft any more.
    suite.environment.api.enqueue(textReply('Noted.'));
    await messageField(page).press('Enter');
    await waitForRunEnd(page, 'Succeeded');
    expect(await messageField(page).inputValue()).toBe('');
    await openFromList(page, first);
    expect(await messageField(page).inputValue()).toBe('Half a thought for the first session');
    await openFromList(page, second);
    expect(await messageField(page).inputValue()).toBe('');
  });

  it('keeps what is typed while a message is on its way: only the sent text leaves the field', async () => {
    const page = await suite.connectedPage();
    await openSessionInPage(page, suite.environment.workspace);
    suite.environment.api.enqueue(textReply('Noted.'));
    // The command is held until the reader typed on: a daemon far away, or a slow network.
    let typedOn: () => void = () => {};
    const typed = new Promise<void>((resolve) => (typedOn = resolve));
    await page.route('**/v1/commands', async (route) => {
      if (route.request().postData()?.includes('"submit_turn"')) await typed;
      await route.continue();
    });
    await messageField(page).fill('First message');
    await messageField(page).press('Enter');
    await messageField(page).pressSequentially(' and a second thought');
    typedOn();
    await waitForRunEnd(page, 'Succeeded');
    expect(await messageField(page).inputValue()).toBe('and a second thought');
  });

  it('a turn whose answer was lost, sent again as the page says, runs once: the resend goes with the same id', async () => {
    const page = await suite.connectedPage();
    await openSessionInPage(page, suite.environment.workspace);
    const turnRequests = () => suite.environment.api.requests.filter((request) => request.kind === 'turn').length;
    const requestsBefore = turnRequests();
    suite.environment.api.enqueue(textReply('Deployed.'));
    const sentIds: string[] = [];
    let dropAnswer = true;
    await page.route('**/v1/commands', async (route) => {
      const body = route.request().postData() ?? '';
      if (body.includes('"submit_turn"')) {
        sentIds.push((JSON.parse(body) as { commandId: string }).commandId);
        // The daemon gets it and answers; the answer never reaches the page (a dropped connection).
        if (dropAnswer) {
          dropAnswer = false;
          await route.fetch();
          await route.abort('connectionreset');
          return;
        }
      }
      await route.continue();
    });
    await messageField(page).fill('Deploy to production once');
    await messageField(page).press('Enter');
    await page.getByText('may or may not have been sent. Send it again as it is').waitFor();
    expect(await messageField(page).inputValue()).toBe('Deploy to production once');
    await messageField(page).press('Enter');
    await waitForRunEnd(page, 'Succeeded');
    expect(sentIds).toHaveLength(2);
    expect(sentIds[1]).toBe(sentIds[0]);
    expect(occurrences(await conversationText(page), 'Deployed')).toBe(1);
    expect(turnRequests()).toBe(requestsBefore + 1);
  });

  it("shows the Context report's tables as tables, once", async () => {
    const page = await suite.connectedPage();
    await openSessionInPage(page, suite.environment.workspace);
    suite.environment.api.enqueue(textReply('Hello.'));
    await sendTurn(page, 'Hi.');
    await waitForRunEnd(page, 'Succeeded');
    await page.getByText('Controls', { exact: true }).click();
    await page.getByRole('button', { name: 'Show context usage' }).click();
    const report = page.getByRole('article', { name: 'Control /context' });
    await report.locator('.control-output').waitFor();
    await waitForRunEnd(page, 'Succeeded');
    // The real CLI's report: a heading, then tables (categories, skills), written as markdown.
    expect(await report.locator('th', { hasText: 'Category' }).count()).toBe(1);
    expect(await report.locator('td', { hasText: 'Free space' }).count()).toBe(1);
    const text = await conversationText(page);
    expect(text).not.toContain('|---');
    expect(text).not.toContain('## Context Usage');
    expect(await report.locator('pre').count()).toBe(0);
  });

  it('at phone width the Controls and a running turn leave the conversation a usable size', async () => {
    const viewport = { width: 390, height: 664 };
    const page = await suite.connectedPage(viewport);
    await openSessionInPage(page, suite.environment.workspace);
    suite.environment.api.enqueue(textReply('Hello.'));
    await sendTurn(page, 'Hi.');
    await waitForRunEnd(page, 'Succeeded');
    await page.getByText('Controls', { exact: true }).click();
    // Opened, the menu is brought into view in the scrolled area below the conversation.
    const contextButton = page.getByRole('button', { name: 'Show context usage' });
    await contextButton.waitFor();
    const button = (await contextButton.boundingBox())!;
    expect(button.y + button.height).toBeLessThanOrEqual(viewport.height);

    suite.environment.api.enqueue(holdReply());
    await sendTurn(page, 'Take your time.');
    await page.getByRole('button', { name: 'Stop the run' }).waitFor();
    const conversation = (await page.locator('.conversation').boundingBox())!;
    expect(conversation.width).toBeGreaterThanOrEqual(viewport.width * 0.9);
    expect(conversation.height).toBeGreaterThanOrEqual(viewport.height * 0.35);
    // The field to write in is not squeezed beside Stop and Queue either.
    expect((await messageField(page).boundingBox())!.width).toBeGreaterThanOrEqual(viewport.width * 0.8);
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(viewport.width);
    await page.getByRole('button', { name: 'Stop the run' }).click();
    await waitForRunEnd(page, 'Stopped');
  });
});
