import { existsSync } from 'node:fs';
import path from 'node:path';
import { textReply, toolUseReply } from '@tether/fake-anthropic-api';
import { expect, it } from 'vitest';
import { browserSuite, describeInBrowser, openSessionInPage, saveScreenshot, sendTurn, waitForRunEnd } from './browser-harness.js';

const color = { question: 'Which color should the button be?', header: 'Color', options: [{ label: 'Red', description: 'warm' }, { label: 'Blue', description: 'cool' }], multiSelect: false };
const sizes = { question: 'Which sizes should we ship?', header: 'Sizes', options: [{ label: 'Small', description: 's' }, { label: 'Medium', description: 'm' }, { label: 'Large', description: 'l' }], multiSelect: true };

describeInBrowser('the web UI: approvals and questions in a real browser', () => {
  const suite = browserSuite();
  const connectedPage = () => suite.connectedPage();

  function lastToolResult(): { content: string; isError: boolean } {
    return suite.environment.api.requests.filter((request) => request.kind === 'turn').at(-1)!.view!.toolResults[0]!;
  }

  it('shows a Bash prompt with its command; approving once runs the tool', async () => {
    const page = await connectedPage();
    await openSessionInPage(page, suite.environment.workspace);
    suite.environment.api.enqueue(toolUseReply('Bash', { command: 'echo approved > approved.txt', description: 'Write a file' }), textReply('Written.'));
    await sendTurn(page, 'Write the file.');
    const card = page.getByRole('region', { name: 'Approval: Bash' });
    await card.waitFor();
    expect(await card.getByLabel('Command').innerText()).toBe('echo approved > approved.txt');
    expect(await card.innerText()).toContain('command');
    expect(await card.getByRole('button', { name: 'Approve for this session' }).isVisible()).toBe(true);
    await saveScreenshot(page, 'approval-card');
    await card.getByRole('button', { name: 'Approve once' }).click();
    await card.waitFor({ state: 'detached' });
    await page.locator('.tool-row.tool-succeeded', { hasText: 'Bash' }).waitFor();
    await page.getByText('Written.').waitFor();
    await waitForRunEnd(page, 'Succeeded');
    expect(existsSync(path.join(suite.environment.workspace, 'approved.txt'))).toBe(true);
    expect(await page.locator('.interaction-row').innerText()).toBe('Approval for Bash: approved');
  });

  it('denies with a message the model receives; nothing runs', async () => {
    const page = await connectedPage();
    await openSessionInPage(page, suite.environment.workspace);
    suite.environment.api.enqueue(toolUseReply('Bash', { command: 'echo nope > denied.txt', description: 'Write' }), textReply('Understood.'));
    await sendTurn(page, 'Try it.');
    const card = page.getByRole('region', { name: 'Approval: Bash' });
    await card.getByLabel('Message to the agent when denying (optional)').fill('Not in this repository, please.');
    await card.getByRole('button', { name: 'Deny', exact: true }).click();
    await card.waitFor({ state: 'detached' });
    await waitForRunEnd(page, 'Succeeded');
    expect(lastToolResult().isError).toBe(true);
    expect(lastToolResult().content).toContain('Not in this repository, please.');
    expect(existsSync(path.join(suite.environment.workspace, 'denied.txt'))).toBe(false);
    expect(await page.locator('.interaction-row').innerText()).toBe('Approval for Bash: denied');
  });

  it('answers a single- and a multi-select question at once', async () => {
    const page = await connectedPage();
    await openSessionInPage(page, suite.environment.workspace);
    suite.environment.api.enqueue(toolUseReply('AskUserQuestion', { questions: [color, sizes] }), textReply('Thanks for answering.'));
    await sendTurn(page, 'Ask me.');
    const card = page.getByRole('form', { name: 'Questions from the agent' });
    await card.waitFor();
    await card.getByRole('radio', { name: 'Red' }).check();
    await card.getByRole('radio', { name: 'Blue' }).check();
    await card.getByRole('checkbox', { name: 'Small' }).check();
    await card.getByRole('checkbox', { name: 'Large' }).check();
    await saveScreenshot(page, 'question-card');
    await card.getByRole('button', { name: 'Send answers' }).click();
    await card.waitFor({ state: 'detached' });
    await page.getByText('Thanks for answering.').waitFor();
    await waitForRunEnd(page, 'Succeeded');
    const result = lastToolResult();
    expect(result.isError).toBe(false);
    expect(result.content).toContain(`"${color.question}"="Blue"`);
    expect(result.content).toContain(`"${sizes.question}"="Small, Large"`);
  });

  it('an answer in one page removes the card in the other at once; keyboard shortcuts answer', async () => {
    const first = await connectedPage();
    const sessionId = await openSessionInPage(first, suite.environment.workspace);
    const second = await connectedPage();
    await second.goto(`${suite.daemon.url}/sessions/${sessionId}`);
    suite.environment.api.enqueue(toolUseReply('Bash', { command: 'echo both > both.txt', description: 'Write' }), textReply('Done from two pages.'));
    await sendTurn(first, 'Write it, either of you may approve.');
    const cardInFirst = first.getByRole('region', { name: 'Approval: Bash' });
    const cardInSecond = second.getByRole('region', { name: 'Approval: Bash' });
    await Promise.all([cardInFirst.waitFor(), cardInSecond.waitFor()]);
    // The list puts the waiting session first and says so.
    await second.locator('.session-item').first().getByText('Waiting for you').waitFor();
    await saveScreenshot(second, 'session-list');
    await cardInSecond.focus();
    await cardInSecond.press('a');
    await Promise.all([cardInFirst.waitFor({ state: 'detached' }), cardInSecond.waitFor({ state: 'detached' })]);
    await waitForRunEnd(first, 'Succeeded');
    expect(existsSync(path.join(suite.environment.workspace, 'both.txt'))).toBe(true);
  });

  it('deny and stop (X) ends the run', async () => {
    const page = await connectedPage();
    await openSessionInPage(page, suite.environment.workspace);
    suite.environment.api.enqueue(toolUseReply('Bash', { command: 'echo stop > stopped.txt', description: 'Write' }), textReply('Should not be asked for.'));
    await sendTurn(page, 'Try, and be stopped.');
    const card = page.getByRole('region', { name: 'Approval: Bash' });
    await card.waitFor();
    await card.focus();
    await card.press('x');
    await card.waitFor({ state: 'detached' });
    await waitForRunEnd(page, 'Stopped');
    expect(existsSync(path.join(suite.environment.workspace, 'stopped.txt'))).toBe(false);
  });
});
