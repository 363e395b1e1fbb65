import { textReply } from '@tether/fake-anthropic-api';
import { expect, it } from 'vitest';
import {
  browserSuite,
  describeInBrowser,
  openSessionInPage,
  readSnapshot,
  saveScreenshot,
  sendTurn,
  waitForRunEnd,
} from './browser-harness.js';

describeInBrowser('the web UI: follow-ups sent while a run works', () => {
  const suite = browserSuite();

  it('Enter queues a follow-up while a run streams; it waits under the conversation, one is withdrawn, the other runs next', async () => {
    const page = await suite.connectedPage();
    const sessionId = await openSessionInPage(page, suite.environment.workspace);
    suite.environment.api.enqueue(
      textReply('slow '.repeat(400), { chunks: 200, delayMs: 50 }),
      textReply('Bananas, as asked.'),
    );
    await sendTurn(page, 'Talk slowly.');
    await page.getByText('slow slow slow', { exact: false }).waitFor();
    const message = page.getByLabel('Message', { exact: true });
    // The composer stays open while the run works, and says what Enter does now.
    expect(await message.isDisabled()).toBe(false);
    expect(await message.getAttribute('placeholder')).toContain('Enter queues it as the next turn');

    await message.fill('Then mention bananas.');
    await message.press('Enter');
    const waiting = page.getByRole('list', { name: 'Waiting follow-ups' });
    await waiting.getByText('Then mention bananas.').waitFor();
    await message.fill('<b>Withdraw</b> me.');
    await message.press('Enter');
    await waiting.getByText('<b>Withdraw</b> me.').waitFor();
    expect(await waiting.getByText('Queued as the next turn').count()).toBe(2);
    expect((await readSnapshot(suite.daemon, sessionId)).queuedInputs.map((queued) => queued.preview)).toEqual([
      'Then mention bananas.',
      '<b>Withdraw</b> me.',
    ]);
    await saveScreenshot(page, 'session-view-follow-ups');

    await page.getByRole('button', { name: 'Withdraw: <b>Withdraw</b> me.' }).click();
    // It leaves the waiting list and shows, struck out, in the run it waited behind.
    await waiting.getByText('<b>Withdraw</b> me.').waitFor({ state: 'detached' });
    await page.locator('.run').first().getByText('Queued follow-up cancelled (withdrawn)').waitFor();
    // Nothing more needs the stream slow: the rest of it at once.
    suite.environment.api.hurryPacedReplies();

    // The run ends; the queued follow-up becomes the next run, with its answer.
    await page.locator('.run').nth(1).getByText('Queued follow-up, run after the turn before').waitFor();
    await waitForRunEnd(page, 'Succeeded');
    await page.locator('.run').nth(1).getByText('Bananas, as asked.').waitFor();
    expect(await page.locator('.run').count()).toBe(2);
    await waiting.waitFor({ state: 'detached' });
    expect(await page.locator('.conversation b').count()).toBe(0);
    const sentToModel = suite.environment.api.requests
      .filter((request) => request.kind === 'turn')
      .map((request) => JSON.stringify(request.body));
    expect(sentToModel.some((body) => body.includes('Then mention bananas.'))).toBe(true);
    expect(sentToModel.some((body) => body.includes('Withdraw'))).toBe(false);

    // The header: an API-key account has no plan limits (said so), and the context after the run.
    await page.locator('.session-limits', { hasText: 'No plan limits: API key account' }).waitFor();
    await page.locator('.session-context', { hasText: /^Context \d+% full after the last run$/ }).waitFor();
  });

  it('with follow-ups queued, Stop all stops the run and withdraws them: nothing more runs; Stop alone is offered beside it', async () => {
    const page = await suite.connectedPage();
    const sessionId = await openSessionInPage(page, suite.environment.workspace);
    suite.environment.api.enqueue(textReply('slow '.repeat(400), { chunks: 200, delayMs: 50 }));
    await sendTurn(page, 'Talk slowly.');
    await page.getByText('slow slow slow', { exact: false }).waitFor();
    const stopAll = page.getByRole('button', { name: 'Stop all: the run, and the 2 queued follow-ups withdrawn' });
    // Nothing queued yet: only Stop.
    expect(await stopAll.count()).toBe(0);
    const message = page.getByLabel('Message', { exact: true });
    for (const followUp of ['First queued.', 'Second queued.']) {
      await message.fill(followUp);
      await message.press('Enter');
      await page.getByRole('list', { name: 'Waiting follow-ups' }).getByText(followUp).waitFor();
    }
    expect(await page.getByRole('button', { name: 'Stop the run', exact: true }).count()).toBe(1);
    const turnsBefore = suite.environment.api.requests.filter((request) => request.kind === 'turn').length;

    // By keyboard: the button goes from under the focus, which stays in the composer, on the message.
    await stopAll.focus();
    await page.keyboard.press('Enter');
    await waitForRunEnd(page, 'Stopped');
    await expect
      .poll(() =>
        page.evaluate<string>(
          "document.activeElement?.getAttribute('aria-label') ?? document.activeElement?.tagName ?? ''",
        ),
      )
      .toBe('Message');
    const run = page.locator('.run').first();
    for (const followUp of ['First queued.', 'Second queued.'])
      await run
        .locator('.follow-up-cancelled', { hasText: followUp })
        .getByText('Queued follow-up cancelled (the run was stopped)')
        .waitFor();
    await page.getByRole('list', { name: 'Waiting follow-ups' }).waitFor({ state: 'detached' });
    const snapshot = await readSnapshot(suite.daemon, sessionId);
    expect(snapshot.queuedInputs).toEqual([]);
    expect(snapshot.activeRunId).toBeNull();
    expect(await page.locator('.run').count()).toBe(1);
    expect(suite.environment.api.requests.filter((request) => request.kind === 'turn')).toHaveLength(turnsBefore);
  });

  it('Ctrl+Enter steers a follow-up into the running turn: it shows as folded into that run, and no run of its own starts', async () => {
    const page = await suite.connectedPage();
    await openSessionInPage(page, suite.environment.workspace);
    suite.environment.api.enqueue(
      textReply('slow '.repeat(400), { chunks: 200, delayMs: 50 }),
      textReply('Hi as well.'),
    );
    await sendTurn(page, 'Talk slowly.');
    await page.getByText('slow slow slow', { exact: false }).waitFor();
    const message = page.getByLabel('Message', { exact: true });
    await page.locator('.composer-steer').waitFor();
    await message.fill('Also say hi.');
    await message.press('Control+Enter');
    await page.getByRole('list', { name: 'Waiting follow-ups' }).getByText('Steering into the running turn').waitFor();
    // The agent has the steer by now (it is written before the UI hears of it) and takes it when this
    // stream ends, whenever that is: no need to wait out the pacing.
    suite.environment.api.hurryPacedReplies();
    const run = page.locator('.run').first();
    await run.locator('.follow-up-folded', { hasText: 'Also say hi.' }).getByText('Folded into this run').waitFor();
    await waitForRunEnd(page, 'Succeeded');
    await run.getByText('Hi as well.').waitFor();
    expect(await page.locator('.run').count()).toBe(1);
    const sentToModel = suite.environment.api.requests.filter((request) => request.kind === 'turn');
    expect(JSON.stringify(sentToModel.at(-1)!.body)).toContain('Also say hi.');
  });
});
