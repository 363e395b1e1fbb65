import { existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { textReply, toolUseReply } from '@tether/fake-anthropic-api';
import { sampleQuestions } from '@tether/testkit';
import { expect, it } from 'vitest';
import {
  browserSuite,
  describeInBrowser,
  openSessionInPage,
  saveScreenshot,
  sendTurn,
  waitForRunEnd,
} from './browser-harness.js';

const { color, sizes } = sampleQuestions;

describeInBrowser('the web UI: approvals and questions in a real browser', () => {
  const suite = browserSuite();
  const connectedPage = () => suite.connectedPage();

  function lastToolResult(): { content: string; isError: boolean } {
    return suite.environment.api.requests.filter((request) => request.kind === 'turn').at(-1)!.view!.toolResults[0]!;
  }

  it('shows a Bash prompt with its command; approving once runs the tool', async () => {
    const page = await connectedPage();
    await openSessionInPage(page, suite.environment.workspace);
    suite.environment.api.enqueue(
      toolUseReply('Bash', { command: 'echo approved > approved.txt', description: 'Write a file' }),
      textReply('Written.'),
    );
    await sendTurn(page, 'Write the file.');
    const card = page.getByRole('region', { name: 'Approval: Bash' });
    await card.waitFor();
    expect(await card.getByLabel('Command').innerText()).toBe('echo approved > approved.txt');
    expect(await card.innerText()).toContain('command');
    expect(await card.getByRole('button', { name: 'Approve for session' }).isVisible()).toBe(true);
    await saveScreenshot(page, 'approval-card');
    await card.getByRole('button', { name: 'Approve once' }).click();
    await card.waitFor({ state: 'detached' });
    await page.locator('.tool-row.tool-succeeded', { hasText: 'Bash' }).waitFor();
    await page.getByText('Written.').waitFor();
    await waitForRunEnd(page, 'Succeeded');
    expect(existsSync(path.join(suite.environment.workspace, 'approved.txt'))).toBe(true);
    expect(await page.locator('.interaction-row').innerText()).toBe('Approval for Bash: approved');
  });

  it('denies with a message the model receives, sent by Enter in its field; nothing runs', async () => {
    const page = await connectedPage();
    await openSessionInPage(page, suite.environment.workspace);
    suite.environment.api.enqueue(
      toolUseReply('Bash', { command: 'echo nope > denied.txt', description: 'Write' }),
      textReply('Understood.'),
    );
    await sendTurn(page, 'Try it.');
    const card = page.getByRole('region', { name: 'Approval: Bash' });
    const why = card.getByLabel('Message to the agent when denying (optional)');
    await why.fill('Not in this repository, please.');
    await why.press('Enter');
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
    suite.environment.api.enqueue(
      toolUseReply('AskUserQuestion', { questions: [color, sizes] }),
      textReply('Thanks for answering.'),
    );
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

  it("Enter in a question's own-words field goes on to the next question; in the last one it sends the set", async () => {
    const page = await connectedPage();
    await openSessionInPage(page, suite.environment.workspace);
    suite.environment.api.enqueue(
      toolUseReply('AskUserQuestion', { questions: [color, sizes] }),
      textReply('Both answered.'),
    );
    await sendTurn(page, 'Ask me.');
    const card = page.getByRole('form', { name: 'Questions from the agent' });
    await card.waitFor();
    await card.getByLabel(`Your own answer to: ${color.question}`).fill('Green please');
    await page.keyboard.press('Enter');
    // Not sent: the second question is still to answer, and the focus is on it.
    expect(await card.count()).toBe(1);
    expect(await page.evaluate<string>("document.activeElement?.getAttribute('value') ?? ''")).toBe('Small');
    await card.getByLabel(`Your own answer to: ${sizes.question}`).fill('Medium');
    await page.keyboard.press('Enter');
    await card.waitFor({ state: 'detached' });
    await waitForRunEnd(page, 'Succeeded');
    const result = lastToolResult();
    expect(result.content).toContain(`"${color.question}"="Green please"`);
    expect(result.content).toContain(`"${sizes.question}"="Medium"`);
  });

  it('an answer in one page removes the card in the other at once; the shortcuts work right after sending', async () => {
    const first = await connectedPage();
    const sessionId = await openSessionInPage(first, suite.environment.workspace);
    const second = await connectedPage();
    await second.goto(`${suite.daemon.url}/sessions/${sessionId}`);
    // Someone is writing in the second page: the card must not take the keyboard from that draft.
    const draft = second.getByLabel('Message', { exact: true });
    await draft.fill('A draft of my own');
    suite.environment.api.enqueue(
      toolUseReply('Bash', { command: 'echo both > both.txt', description: 'Write' }),
      textReply('Done from two pages.'),
    );
    await sendTurn(first, 'Write it, either of you may approve.');
    const cardInFirst = first.getByRole('region', { name: 'Approval: Bash' });
    const cardInSecond = second.getByRole('region', { name: 'Approval: Bash' });
    await Promise.all([cardInFirst.waitFor(), cardInSecond.waitFor()]);
    // The list puts the waiting session first and says so.
    await second.locator('.session-item').first().getByText('Waiting for you').waitFor();
    await saveScreenshot(second, 'session-list');
    expect(await draft.evaluate((field) => field === field.ownerDocument.activeElement)).toBe(true);
    // The first page sent with Enter and touched nothing since: the card has the keyboard, not the composer.
    await first.keyboard.press('a');
    await Promise.all([cardInFirst.waitFor({ state: 'detached' }), cardInSecond.waitFor({ state: 'detached' })]);
    await waitForRunEnd(first, 'Succeeded');
    expect(existsSync(path.join(suite.environment.workspace, 'both.txt'))).toBe(true);
    expect(await first.getByLabel('Message', { exact: true }).inputValue()).toBe('');
    // The answered card went from under the keyboard: it stays at the bottom, in the composer.
    const message = first.getByLabel('Message', { exact: true });
    expect(await message.evaluate((field) => field === field.ownerDocument.activeElement)).toBe(true);
    expect(await draft.inputValue()).toBe('A draft of my own');
  });

  it('always allow in this project: the rule lands in .claude/settings.local.json', async () => {
    const page = await connectedPage();
    await openSessionInPage(page, suite.environment.workspace);
    suite.environment.api.enqueue(
      toolUseReply('Bash', { command: 'echo project > project.txt', description: 'Write' }),
      textReply('Allowed for the project.'),
    );
    await sendTurn(page, 'Write it for good.');
    const card = page.getByRole('region', { name: 'Approval: Bash' });
    await card.getByRole('button', { name: 'Always allow in project' }).click();
    await card.waitFor({ state: 'detached' });
    await waitForRunEnd(page, 'Succeeded');
    const settingsFile = path.join(suite.environment.workspace, '.claude', 'settings.local.json');
    const rules = (JSON.parse(readFileSync(settingsFile, 'utf8')) as { permissions: { allow: string[] } }).permissions
      .allow;
    expect(rules.some((rule) => rule.startsWith('Bash(echo project'))).toBe(true);
    // The other tests of this file share the workspace: they must still be asked.
    rmSync(settingsFile);
  });

  it("edits the command before approving: the edited command runs, the model's does not; a bad edit sends nothing", async () => {
    const page = await connectedPage();
    await openSessionInPage(page, suite.environment.workspace);
    suite.environment.api.enqueue(
      toolUseReply('Bash', { command: 'echo model > model.txt', description: 'Write a file' }),
      textReply('Done as edited.'),
    );
    await sendTurn(page, 'Write it.');
    const card = page.getByRole('region', { name: 'Approval: Bash' });
    await card.getByRole('button', { name: 'Edit the input before approving' }).click();
    const editor = card.getByLabel('Command to run instead');
    expect(await editor.inputValue()).toBe('echo model > model.txt');
    // The Edit… button went with the click: the keyboard is in the command to edit.
    await expect
      .poll(() =>
        page.evaluate<string>("document.activeElement?.classList.contains('approval-edit-text') ? 'editor' : ''"),
      )
      .toBe('editor');
    await editor.fill('   ');
    await card.getByRole('button', { name: 'Approve edited' }).click();
    expect(await card.getByRole('alert').innerText()).toContain('The command is empty');
    await editor.fill('echo edited > edited.txt');
    await saveScreenshot(page, 'approval-edit');
    await card.getByRole('button', { name: 'Approve edited' }).click();
    await card.waitFor({ state: 'detached' });
    await waitForRunEnd(page, 'Succeeded');
    expect(existsSync(path.join(suite.environment.workspace, 'edited.txt'))).toBe(true);
    expect(existsSync(path.join(suite.environment.workspace, 'model.txt'))).toBe(false);
    // The record says what ran: the edit, not only "approved".
    await page.getByText('Approval for Bash: approved with an edit: echo edited > edited.txt').waitFor();
  });

  it('edits a tool input as JSON: invalid JSON is refused in the card, a valid object runs', async () => {
    const page = await connectedPage();
    await openSessionInPage(page, suite.environment.workspace);
    const target = path.join(suite.environment.workspace, 'notes.txt');
    suite.environment.api.enqueue(
      toolUseReply('Write', { file_path: target, content: 'from the model\n' }),
      textReply('Written as edited.'),
    );
    await sendTurn(page, 'Write the notes.');
    const card = page.getByRole('region', { name: 'Approval: Write' });
    await card.getByRole('button', { name: 'Edit the input before approving' }).click();
    const editor = card.getByLabel('Tool input to use instead (JSON)');
    await editor.fill('{ "file_path": ');
    await card.getByRole('button', { name: 'Approve edited' }).click();
    expect(await card.getByRole('alert').innerText()).toContain('not valid JSON');
    await editor.fill(JSON.stringify({ file_path: target, content: 'from the person\n' }));
    await card.getByRole('button', { name: 'Approve edited' }).click();
    await card.waitFor({ state: 'detached' });
    await waitForRunEnd(page, 'Succeeded');
    expect(readFileSync(target, 'utf8')).toBe('from the person\n');
  });

  it('a plan approval can choose the mode the plan is carried out in', async () => {
    const page = await connectedPage();
    await page.getByRole('button', { name: 'New session' }).click();
    await page.getByLabel('Working directory').fill(suite.environment.workspace);
    await page.getByLabel('Permission mode').selectOption('plan');
    await page.getByRole('button', { name: 'Open session' }).click();
    await page.waitForURL(/\/sessions\/ses_[0-9a-f]{32}$/);
    const sessionId = /ses_[0-9a-f]{32}/.exec(page.url())![0];
    // As a model in plan mode does: the plan goes to the file the CLI names, then ExitPlanMode asks to leave.
    const api = suite.environment.api;
    api.setResponder((view) => {
      const planFile =
        /[^"\\ ]*\.claude\/plans\/[^"\\ ]*\.md/.exec(JSON.stringify(view.body))?.[0] ?? 'no plan file named';
      api.setResponder(() => {
        api.setResponder(undefined);
        return toolUseReply('ExitPlanMode', {});
      });
      return toolUseReply('Write', {
        file_path: planFile,
        content: '## Plan\n\n1. Change **the thing**\n2. Test it\n',
      });
    });
    await sendTurn(page, 'Plan it.');
    const card = page.getByRole('region', { name: 'Approval: ExitPlanMode' });
    await card.waitFor();
    expect(await card.getByLabel('Plan', { exact: true }).innerText()).toContain('Change the thing');
    await saveScreenshot(page, 'plan-approval');
    api.enqueue(textReply('Proceeding.'));
    expect(await card.getByRole('button', { name: 'Edit the input before approving' }).count()).toBe(0);
    await card.getByLabel('Mode to carry out the plan in').selectOption('auto_edit');
    await card.getByRole('button', { name: 'Approve once' }).click();
    await card.waitFor({ state: 'detached' });
    await waitForRunEnd(page, 'Succeeded');
    const snapshot = await fetch(`${suite.daemon.url}/v1/sessions/${sessionId}`, {
      headers: { authorization: `Bearer ${suite.daemon.token}` },
    });
    expect(((await snapshot.json()) as { permissionMode: string }).permissionMode).toBe('auto_edit');
  });

  it('Stop while an approval waits: the prompt is shown as withdrawn because the run was stopped', async () => {
    const page = await connectedPage();
    await openSessionInPage(page, suite.environment.workspace);
    suite.environment.api.enqueue(toolUseReply('Bash', { command: 'echo late > late.txt', description: 'Write' }));
    await sendTurn(page, 'Ask, then be stopped.');
    const card = page.getByRole('region', { name: 'Approval: Bash' });
    await card.waitFor();
    await page.getByRole('button', { name: 'Stop the run', exact: true }).click();
    await card.waitFor({ state: 'detached' });
    await waitForRunEnd(page, 'Stopped');
    expect(await page.locator('.interaction-row').innerText()).toBe(
      'Approval for Bash: withdrawn: the run was stopped',
    );
  });

  it('deny and stop (X) ends the run; bidirectional controls in the command are written out, so it reads in the order it runs', async () => {
    const page = await connectedPage();
    await openSessionInPage(page, suite.environment.workspace);
    // Nothing after it: the run ends with the stop (a reply left queued would be the next test's).
    suite.environment.api.enqueue(
      toolUseReply('Bash', { command: 'echo stop > stopped.txt # \u202etxt.evil\u202c', description: 'Write' }),
    );
    await sendTurn(page, 'Try, and be stopped.');
    const card = page.getByRole('region', { name: 'Approval: Bash' });
    await card.waitFor();
    expect(await card.getByLabel('Command').innerText()).toBe('echo stop > stopped.txt # <U+202E>txt.evil<U+202C>');
    await page.keyboard.press('x');
    await card.waitFor({ state: 'detached' });
    await waitForRunEnd(page, 'Stopped');
    expect(existsSync(path.join(suite.environment.workspace, 'stopped.txt'))).toBe(false);
  });

  it("the agent's own lines write bidirectional controls out too (a path outside the workspace)", async () => {
    const page = await connectedPage();
    await openSessionInPage(page, suite.environment.workspace);
    const outside = path.join(path.dirname(suite.environment.workspace), 'outside', 'report\u202etxt.exe');
    suite.environment.api.enqueue(toolUseReply('Write', { file_path: outside, content: 'x' }));
    await sendTurn(page, 'Write it there.');
    const card = page.getByRole('region', { name: 'Approval: Write' });
    await card.waitFor();
    // The agent's own line (here the path, as its prompt) and the Path line alike: every character shown.
    const text = await card.innerText();
    expect(text).not.toContain('\u202e');
    expect(text.split('report<U+202E>txt.exe').length).toBe(3);
    await page.keyboard.press('x');
    await waitForRunEnd(page, 'Stopped');
  });
});
