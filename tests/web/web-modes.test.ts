import { holdReply, textReply } from '@tether/fake-anthropic-api';
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

describeInBrowser('the web UI: permission modes in a real browser', () => {
  // Bypass is what the real CLI cannot enter live; as root it starts in bypass only inside a sandbox.
  const suite = browserSuite({ sandbox: true });

  const snapshotOf = (sessionId: string) => readSnapshot(suite.daemon, sessionId);

  it('marks the modes that restart the agent; choosing one offers the restart, and the next turn runs in that mode', async () => {
    const page = await suite.connectedPage();
    const sessionId = await openSessionInPage(page, suite.environment.workspace);
    await page.getByText('Controls', { exact: true }).click();
    const select = page.getByLabel('Permission mode');
    const restartNotes = select.locator('option', { hasText: 'restarts the agent' });

    suite.environment.api.enqueue(textReply('Hello.'));
    await sendTurn(page, 'Hi.');
    await waitForRunEnd(page, 'Succeeded');
    // The agent now runs in the default mode: it cannot enter bypass without a restart, and the menu says so.
    await select.locator('option', { hasText: 'Bypass (restarts the agent)' }).waitFor({ state: 'attached' });
    expect(await restartNotes.count()).toBe(1);
    expect((await snapshotOf(sessionId)).modesRequiringRestart).toEqual(['bypass']);

    await select.selectOption('plan');
    expect(await page.getByRole('button', { name: 'Set mode', exact: true }).isEnabled()).toBe(true);
    expect(await page.getByRole('note').count()).toBe(0);
    await select.selectOption('bypass');
    expect(await page.getByRole('note').innerText()).toContain(
      'The running agent cannot switch to Bypass. Restarting stops it now',
    );
    await saveScreenshot(page, 'mode-restart');
    await page.getByRole('button', { name: 'Restart in Bypass' }).click();
    await page.getByText('Agent stopped: it starts again in Bypass mode with your next turn.').waitFor();
    await page.locator('.session-facts', { hasText: 'Bypass' }).waitFor();
    // No agent runs now, so no mode needs a restart.
    await restartNotes.first().waitFor({ state: 'detached' });
    expect(await snapshotOf(sessionId)).toMatchObject({
      permissionMode: 'bypass',
      modesRequiringRestart: [],
      configuration: { permissionMode: 'bypass' },
    });

    suite.environment.api.enqueue(textReply('Running in bypass now.'));
    await sendTurn(page, 'Again.');
    await page.getByText('Running in bypass now.').waitFor();
    await waitForRunEnd(page, 'Succeeded');
    // Launched in bypass, the agent can enter every mode live.
    expect(await snapshotOf(sessionId)).toMatchObject({
      state: 'idle',
      permissionMode: 'bypass',
      modesRequiringRestart: [],
    });
    expect(await restartNotes.count()).toBe(0);
  });

  it('keeps a mode picked before the agent first names its own, when the agent names the default it was shown', async () => {
    const page = await suite.connectedPage();
    const sessionId = await openSessionInPage(page, suite.environment.workspace);
    await page.getByText('Controls', { exact: true }).click();
    const select = page.getByLabel('Permission mode');
    await select.selectOption('plan');
    suite.environment.api.enqueue(textReply('Hello.'));
    await sendTurn(page, 'Hi.');
    await waitForRunEnd(page, 'Succeeded');
    // The agent's first report named its default mode, which the menu showed before the pick.
    expect((await snapshotOf(sessionId)).permissionMode).toBe('ask_before_edit');
    expect(await select.inputValue()).toBe('plan');
  });

  it('offers the restart only once the run ends: stopping the agent mid-run would end the run', async () => {
    const page = await suite.connectedPage();
    await openSessionInPage(page, suite.environment.workspace);
    await page.getByText('Controls', { exact: true }).click();
    const select = page.getByLabel('Permission mode');
    suite.environment.api.enqueue(holdReply());
    await sendTurn(page, 'Take your time.');
    // The agent started for this run (not in bypass), so the menu marks bypass while the run goes on.
    await select.locator('option', { hasText: 'Bypass (restarts the agent)' }).waitFor({ state: 'attached' });
    await select.selectOption('bypass');
    expect(await page.getByRole('button', { name: 'Restart in Bypass' }).isDisabled()).toBe(true);
    expect(await page.getByRole('note').innerText()).toContain('Available once the run ends.');
    await page.getByRole('button', { name: 'Stop the run' }).click();
    await waitForRunEnd(page, 'Stopped');
    await page.getByRole('button', { name: 'Restart in Bypass', disabled: false }).waitFor();
    expect(await page.getByRole('note').innerText()).not.toContain('Available once the run ends.');
  });
});
