import { errorReply, textReply, thinkingReply, toolUseReply } from '@tether/fake-anthropic-api';
import type { Page } from 'playwright-core';
import { expect, it, vi } from 'vitest';
import { client, openSession, startTestDaemon } from '../daemon/daemon-test-helpers.js';
import {
  browserSuite,
  conversationText,
  describeInBrowser,
  occurrences,
  openSessionInPage,
  phoneViewport,
  readSnapshot,
  saveScreenshot,
  sendTurn,
  waitForRunEnd,
  webDist,
} from './browser-harness.js';

/** A page on a session the daemon does not have: no composer, no session actions, not loading. */
async function expectNothingToActOn(page: Page): Promise<void> {
  const session = page.getByRole('region', { name: 'Session' });
  expect(await session.getByLabel('Message', { exact: true }).count()).toBe(0);
  expect(await session.getByRole('button').count()).toBe(0);
  expect(await session.getByText('Loading…').count()).toBe(0);
}

describeInBrowser('the web UI: conversations in a real browser', () => {
  const suite = browserSuite();
  const connectedPage = (viewport?: { width: number; height: number }) => suite.connectedPage(viewport);

  it('by keyboard, a new session is opened and talked to without the mouse: the focus goes where to type next', async () => {
    const page = await connectedPage();
    const focusedLabel = () =>
      page.evaluate<string>(
        "document.activeElement?.getAttribute('aria-label') ?? document.activeElement?.closest('label')?.textContent?.trim() ?? document.activeElement?.tagName ?? ''",
      );
    await page.getByRole('button', { name: 'New session' }).focus();
    await page.keyboard.press('Enter');
    await expect.poll(focusedLabel).toContain('Working directory');
    await page.keyboard.type(suite.environment.workspace);
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/sessions\/ses_[0-9a-f]{32}$/);
    await expect.poll(focusedLabel).toBe('Message');
  });

  it('asks for the token once per tab, refuses a wrong one, and never puts it in the URL', async () => {
    const { daemon } = suite;
    const page = await (await suite.newContext()).newPage();
    await page.goto(`${daemon.url}/`);
    await page.getByLabel('Daemon token').fill('not-the-token');
    await page.getByRole('button', { name: 'Connect' }).click();
    await page.getByRole('alert').getByText('The daemon refused this token.', { exact: false }).waitFor();
    await page.getByLabel('Daemon token').fill(daemon.token);
    await page.getByRole('button', { name: 'Connect' }).click();
    await page.getByRole('navigation', { name: 'Sessions' }).waitFor();
    // Kept for the tab: a reload does not ask again.
    await page.reload();
    await page.getByRole('navigation', { name: 'Sessions' }).waitFor();
    // Its name is the label it shows (WCAG 2.5.3); the longer wording is its title.
    expect(await page.getByRole('button', { name: 'Sign out' }).getAttribute('title')).toBe(
      'Forget the token in this tab',
    );
    expect(page.url()).not.toContain(daemon.token);
    expect(await page.evaluate('sessionStorage.length')).toBe(1);
    expect(await page.evaluate('localStorage.length')).toBe(0);
  });

  it('opens a session, sends a turn and shows the answer as it streams, with usage and cost', async () => {
    const page = await connectedPage();
    const sessionId = await openSessionInPage(page, suite.environment.workspace);
    // The form asks for the agent at once (startAgent): it runs before the first prompt is written, so
    // a mode it was not launched in (bypass) would need a restart.
    await vi.waitFor(
      async () => expect((await readSnapshot(suite.daemon, sessionId)).modesRequiringRestart).toEqual(['bypass']),
      { timeout: 30_000 },
    );
    const answer = Array.from({ length: 40 }, (_, index) => `part${index + 1}`).join(' ');
    suite.environment.api.enqueue(
      textReply(`## Streamed\n\n${answer}`, {
        chunks: 40,
        delayMs: 40,
        usage: { inputTokens: 1200, outputTokens: 48 },
      }),
    );
    await sendTurn(page, 'Stream something, please.');
    // Seen part-way: the run is still going while the first words are on screen.
    await page.getByText('part3', { exact: false }).waitFor();
    await page.locator('.run-status-active').waitFor();
    await saveScreenshot(page, 'session-view-streaming');
    await waitForRunEnd(page, 'Succeeded');
    const text = await conversationText(page);
    expect(occurrences(text, answer)).toBe(1);
    expect(await page.locator('.run-status').last().innerText()).toMatch(/1,200 in \/ 48 out tokens · \$/);
    expect(await page.locator('.session-facts').innerText()).toContain('1,200 in / 48 out tokens');
  });

  it('a turn the agent began by itself (a background task finished) shows as such, with its answer and no prompt', async () => {
    const page = await suite.connectedPage();
    await openSessionInPage(page, suite.environment.workspace);
    suite.environment.api.setResponder((view) => {
      if (view.isSubagent) return textReply('Hello from the background subagent.');
      if (view.lastUserText.includes('<task-notification>')) return textReply('The background agent has finished.');
      if (view.toolResults.length > 0) return textReply('A background agent is working on it.');
      return toolUseReply('Agent', {
        description: 'Say hello',
        prompt: 'SUBAGENT TASK: say hello.',
        subagent_type: 'general-purpose',
        run_in_background: true,
      });
    });
    try {
      await sendTurn(page, 'Use a background subagent.');
      const own = page.locator('.run').nth(1);
      await own.getByText('Begun by the agent: a background task it ran finished').waitFor();
      await own.getByText('The background agent has finished.').waitFor();
      expect(await own.locator('.turn-input').count()).toBe(0);
      await page.locator('.run').first().getByText('A background agent is working on it.').waitFor();
    } finally {
      suite.environment.api.setResponder(undefined);
    }
  });

  it('renders HTML and javascript: links in a model reply as inert text', async () => {
    const page = await connectedPage();
    await openSessionInPage(page, suite.environment.workspace);
    suite.environment.api.enqueue(
      textReply(
        'Look: <img src=x onerror="window.__pwned=1"> and [click me](javascript:window.__pwned=2) and <script>window.__pwned=3</script> **bold** ![pixel](http://127.0.0.1:9/pixel.png)',
      ),
    );
    await sendTurn(page, 'Say something dangerous.');
    await waitForRunEnd(page, 'Succeeded');
    const conversation = page.locator('.conversation');
    await conversation.getByText('<img src=x onerror="window.__pwned=1">', { exact: false }).waitFor();
    await conversation.getByText('(javascript:window.__pwned=2)', { exact: false }).waitFor();
    await conversation.getByText('(http://127.0.0.1:9/pixel.png)', { exact: false }).waitFor();
    expect(await conversation.locator('img, script, iframe, a[href]').count()).toBe(0);
    expect(await page.locator('a[href^="javascript:"]').count()).toBe(0);
    expect(await conversation.locator('strong', { hasText: 'bold' }).count()).toBe(1);
    expect(await page.evaluate('window.__pwned')).toBeUndefined();
  });

  it('follows a long answer to its end while the reader does not scroll, and stops following once they scroll up', async () => {
    const page = await connectedPage(phoneViewport);
    await openSessionInPage(page, suite.environment.workspace);
    const paragraph = (index: number) => `Paragraph ${index}: ${'words to read '.repeat(15)}`;
    const long = Array.from({ length: 60 }, (_, index) => paragraph(index + 1)).join('\n\n');
    suite.environment.api.enqueue(textReply(long, { chunks: 200, delayMs: 10 }));
    await sendTurn(page, 'Write at length.');
    await waitForRunEnd(page, 'Succeeded');
    const gap = () =>
      page.evaluate<number>(
        "(() => { const element = document.querySelector('.conversation'); return element.scrollHeight - element.scrollTop - element.clientHeight; })()",
      );
    // At the end of the answer, as it was followed all along.
    await expect.poll(gap).toBeLessThan(5);
    // Scrolled up to reread: a new answer does not pull the reader down.
    await page.evaluate("document.querySelector('.conversation').scrollTop = 0");
    suite.environment.api.enqueue(textReply(long, { chunks: 60, delayMs: 5 }));
    await sendTurn(page, 'Again, at length.');
    await waitForRunEnd(page, 'Succeeded');
    expect(await page.evaluate<number>("document.querySelector('.conversation').scrollTop")).toBeLessThan(50);
  });

  it('stops a slow turn with the Stop button', async () => {
    const page = await connectedPage();
    await openSessionInPage(page, suite.environment.workspace);
    suite.environment.api.enqueue(textReply('slow '.repeat(300), { chunks: 150, delayMs: 50 }));
    await sendTurn(page, 'Talk slowly.');
    await page.getByText('slow slow slow', { exact: false }).waitFor();
    await page.getByRole('button', { name: 'Stop the run' }).click();
    await waitForRunEnd(page, 'Stopped');
    expect(await page.getByRole('button', { name: 'Stop the run' }).count()).toBe(0);
  });

  it('closes a running session only after asking, reopens it with its history, and deletes it after asking', async () => {
    const page = await connectedPage();
    const sessionId = await openSessionInPage(page, suite.environment.workspace);
    suite.environment.api.enqueue(textReply('still talking '.repeat(200), { chunks: 100, delayMs: 50 }));
    await sendTurn(page, 'Keep talking.');
    await page.getByText('still talking still talking', { exact: false }).waitFor();
    await page.getByRole('button', { name: 'Close session' }).click();
    const confirm = page.getByRole('group', { name: 'Confirm' });
    expect(await confirm.innerText()).toContain('Closing stops the run');
    await confirm.getByRole('button', { name: 'Close and stop' }).click();
    await page.locator('.session-header .status-closed').waitFor();
    expect(await page.getByLabel('Message', { exact: true }).isDisabled()).toBe(true);

    await page.getByRole('button', { name: 'Reopen the session' }).click();
    await page.locator('.session-header .status-closed').waitFor({ state: 'detached' });
    suite.environment.api.enqueue(textReply('Back again.'));
    await sendTurn(page, 'Are you there?');
    await page.getByText('Back again.').waitFor();
    await waitForRunEnd(page, 'Succeeded');
    // The reopened conversation carries the earlier turn to the model.
    expect(
      JSON.stringify(suite.environment.api.requests.filter((request) => request.kind === 'turn').at(-1)!.body),
    ).toContain('Keep talking.');

    // By keyboard: each button that goes from under the focus hands it to what replaces it.
    const focused = () => page.evaluate<string>("document.activeElement?.textContent?.trim() ?? ''");
    await page.getByRole('button', { name: 'Close session' }).focus();
    await page.keyboard.press('Enter');
    await page.locator('.session-header .status-closed').waitFor();
    await expect.poll(focused).toBe('Reopen');
    await page.getByRole('button', { name: 'Delete the session' }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('group', { name: 'Confirm' }).waitFor();
    await expect.poll(focused).toBe('Delete for good');
    await page.keyboard.press('Enter');
    await page.waitForURL((url) => url.pathname === '/');
    const response = await fetch(`${suite.daemon.url}/v1/sessions/${sessionId}`, {
      headers: { authorization: `Bearer ${suite.daemon.token}` },
    });
    expect(response.status).toBe(404);
    await page.locator('.session-item', { hasText: 'Keep talking.' }).waitFor({ state: 'detached' });
  });

  it('a close confirmation whose run ends while it is open says so, and closes without speaking of stopping', async () => {
    const page = await connectedPage();
    await openSessionInPage(page, suite.environment.workspace);
    suite.environment.api.enqueue(textReply('short while '.repeat(20), { chunks: 20, delayMs: 100 }));
    await sendTurn(page, 'Talk a short while.');
    await page.getByText('short while short while', { exact: false }).waitFor();
    await page.getByRole('button', { name: 'Close session' }).click();
    const confirm = page.getByRole('group', { name: 'Confirm' });
    expect(await confirm.innerText()).toContain('Closing stops the run');
    await waitForRunEnd(page, 'Succeeded');
    await expect.poll(() => confirm.innerText()).toContain('The run has ended meanwhile. Close the session?');
    await confirm.getByRole('button', { name: 'Close', exact: true }).click();
    await page.locator('.session-header .status-closed').waitFor();
  });

  it('a delete confirmation goes away when the session is reopened elsewhere meanwhile', async () => {
    const page = await connectedPage();
    const sessionId = await openSessionInPage(page, suite.environment.workspace);
    await page.getByRole('button', { name: 'Close session' }).click();
    await page.locator('.session-header .status-closed').waitFor();
    await page.getByRole('button', { name: 'Delete the session' }).click();
    const confirm = page.getByRole('group', { name: 'Confirm' });
    await confirm.getByRole('button', { name: 'Delete for good' }).waitFor();
    const reopened = await fetch(`${suite.daemon.url}/v1/commands`, {
      method: 'POST',
      headers: { authorization: `Bearer ${suite.daemon.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'open_session', commandId: 'reopen-elsewhere-1', continueSession: sessionId }),
    });
    expect(reopened.status).toBe(200);
    await confirm.waitFor({ state: 'detached' });
    await page.getByRole('button', { name: 'Close session' }).waitFor();
  });

  it('an unknown session id shows that there is no such session, with the way back and nothing to act on', async () => {
    const page = await connectedPage();
    await page.goto(`${suite.daemon.url}/sessions/ses_${'0'.repeat(32)}`);
    await page.getByRole('heading', { name: 'This session does not exist (or was deleted)' }).waitFor();
    await expectNothingToActOn(page);
    await page.getByRole('link', { name: 'Back to the session list' }).click();
    await page.waitForURL((url) => url.pathname === '/');
    // Its changes' address says the same, not the daemon's error text.
    await page.goto(`${suite.daemon.url}/sessions/ses_${'0'.repeat(32)}/diff`);
    await page.getByRole('heading', { name: 'This session does not exist (or was deleted)' }).waitFor();
    await expectNothingToActOn(page);
    await page.getByRole('link', { name: 'Back to the session list' }).click();
    await page.waitForURL((url) => url.pathname === '/');
  });

  it('a session deleted from another tab turns into "does not exist" there, not a reconnect that never ends', async () => {
    const deleting = await connectedPage();
    const sessionId = await openSessionInPage(deleting, suite.environment.workspace);
    const watching = await connectedPage();
    await watching.goto(`${suite.daemon.url}/sessions/${sessionId}`);
    await watching.getByText('No turns yet. Say something below.').waitFor();
    await deleting.getByRole('button', { name: 'Close session' }).click();
    await deleting.getByRole('button', { name: 'Delete the session' }).click();
    await deleting.getByRole('group', { name: 'Confirm' }).getByRole('button', { name: 'Delete for good' }).click();
    await deleting.waitForURL((url) => url.pathname === '/');
    await watching.getByRole('heading', { name: 'This session does not exist (or was deleted)' }).waitFor();
    await expectNothingToActOn(watching);
    expect(await watching.getByText('Reconnecting…', { exact: false }).count()).toBe(0);
  });

  it('after a reload mid-stream shows the whole answer exactly once', async () => {
    const page = await connectedPage();
    await openSessionInPage(page, suite.environment.workspace);
    const answer = Array.from({ length: 60 }, (_, index) => `word${String(index + 1).padStart(3, '0')}`).join(' ');
    suite.environment.api.enqueue(textReply(answer, { chunks: 60, delayMs: 50 }));
    await sendTurn(page, 'A long answer, please.');
    await page.getByText('word005', { exact: false }).waitFor();
    await page.reload();
    await waitForRunEnd(page, 'Succeeded');
    expect(occurrences(await conversationText(page), answer)).toBe(1);
    expect(occurrences(await conversationText(page), 'word001')).toBe(1);
  });

  it('works at phone width: one column, nothing wider than the screen', async () => {
    const page = await connectedPage(phoneViewport);
    await openSessionInPage(page, suite.environment.workspace);
    const table =
      '| file | change | lines |\n|---|---|--:|\n| packages/web/src/markdown/markdown-text.tsx | renderer | 100 |\n| packages/web/src/styles/code-highlight.css | theme | 110 |';
    const code =
      // biome-ignore lint/suspicious/noTemplateCurlyInString: TypeScript shown as a code sample, not a template.
      '```ts\nexport function greet(name: string): string {\n  return `Hello, ${name}`; // a comment that is longer than a phone is wide\n}\n```';
    suite.environment.api.enqueue(
      textReply(
        `A short answer that wraps on a narrow screen, with \`inline code\` and a list:\n\n- one\n- two\n\n${table}\n\n${code}`,
      ),
    );
    await sendTurn(page, 'Hello from a phone.');
    await waitForRunEnd(page, 'Succeeded');
    // The table and the coloured code (its highlighter is a chunk fetched on first use) fit the screen.
    await page.locator('.conversation table td', { hasText: 'renderer' }).waitFor();
    await page.locator('.conversation pre code .hljs-keyword', { hasText: 'export' }).waitFor();
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(phoneViewport.width);
    expect(await page.getByRole('navigation', { name: 'Sessions' }).isVisible()).toBe(false);
    await saveScreenshot(page, 'phone-session-view');
    await page.getByRole('link', { name: '← All sessions' }).click();
    await page.getByRole('navigation', { name: 'Sessions' }).waitFor();
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(phoneViewport.width);
  });

  it("at phone width a model's unbroken thinking and question wrap, nothing scrolls sideways; a question's bidi controls are written out", async () => {
    const page = await connectedPage(phoneViewport);
    await openSessionInPage(page, suite.environment.workspace);
    const unbroken = `thinking${'x'.repeat(400)}end`;
    suite.environment.api.enqueue(thinkingReply(unbroken, 'Done thinking.'));
    await sendTurn(page, 'Think it over.');
    await waitForRunEnd(page, 'Succeeded');
    await page.locator('.conversation summary', { hasText: 'Thinking' }).click();
    await page.getByText(unbroken).waitFor();
    const sideways = (selector: string) =>
      page.evaluate<number>(
        `(() => { const e = document.querySelector('${selector}'); return e.scrollWidth - e.clientWidth; })()`,
      );
    expect(await sideways('.conversation')).toBeLessThanOrEqual(0);
    // A question card's fieldset is as wide as its widest word unless told otherwise.
    const label = `option${'y'.repeat(70)}`;
    suite.environment.api.enqueue(
      toolUseReply('AskUserQuestion', {
        questions: [
          {
            question: `Which${'z'.repeat(70)}?`,
            header: 'Choice',
            multiSelect: false,
            options: [
              { label, description: 'd'.repeat(70) },
              // A right-to-left override shows "txt.exe" as "exe.txt": a question shows it written out.
              { label: 'Short', description: 'Opens \u202Etxt.exe' },
            ],
          },
        ],
      }),
      textReply('Answered.'),
    );
    await sendTurn(page, 'Ask me.');
    const card = page.getByRole('form', { name: 'Questions from the agent' });
    await card.getByRole('radio', { name: 'Short' }).waitFor();
    expect(await sideways('.session-bottom')).toBeLessThanOrEqual(0);
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(phoneViewport.width);
    expect(await card.innerText()).toContain('Opens <U+202E>txt.exe');
    await card.getByRole('button', { name: 'Decline' }).click();
    await card.waitFor({ state: 'detached' });
  });

  it('lists sessions by their first prompt and last outcome from snapshots alone: its poll opens no event stream', async () => {
    const page = await connectedPage();
    const eventStreams: string[] = [];
    page.on('request', (request) => {
      if (/^\/v1\/sessions\/[^/]+\/events/.test(new URL(request.url()).pathname)) eventStreams.push(request.url());
    });
    const api = client(suite.daemon);
    const listed = (sessionId: string, label: string) =>
      page
        .getByRole('navigation', { name: 'Sessions' })
        .locator(`a[href="/sessions/${sessionId}"][aria-label="${label}"]`);

    const fresh = await openSession(api, suite.environment.workspace);
    await listed(fresh, 'No turns yet — Idle').waitFor();
    const tidy = await openSession(api, suite.environment.workspace);
    suite.environment.api.enqueue(textReply('Tidied.'));
    await api.command({
      type: 'submit_turn',
      sessionId: tidy,
      input: [{ type: 'text', text: '  Tidy   the\n\nREADME, please ' }],
    });
    await listed(tidy, 'Tidy the README, please — Idle').waitFor();
    const failing = await openSession(api, suite.environment.workspace);
    // A 500 and its one retry (CLAUDE_CODE_MAX_RETRIES=1): the run fails.
    suite.environment.api.enqueue(errorReply(500), errorReply(500));
    await api.command({ type: 'submit_turn', sessionId: failing, input: [{ type: 'text', text: 'This one fails.' }] });
    await listed(failing, 'This one fails. — Failed').waitFor();

    expect(eventStreams).toEqual([]);
  });

  // Last: it restarts the daemon (same port, same data dir) under the open page.
  it('shows that it is reconnecting while the daemon is down, then resumes with no text lost or doubled', async () => {
    const page = await connectedPage();
    await openSessionInPage(page, suite.environment.workspace);
    suite.environment.api.enqueue(textReply('Before the restart.'));
    await sendTurn(page, 'First.');
    await waitForRunEnd(page, 'Succeeded');
    const port = suite.daemon.port;
    await suite.daemon.close();
    await page.getByRole('status').getByText('Reconnecting…', { exact: false }).waitFor();
    // A turn sent meanwhile is refused, said once; the notice goes when the daemon answers again.
    await page.getByLabel('Message', { exact: true }).fill('While it is down.');
    await page.getByLabel('Message', { exact: true }).press('Enter');
    const unreachable = page.getByRole('alert').getByText('not reachable', { exact: false });
    await unreachable.waitFor();
    suite.daemon = await startTestDaemon(suite.environment, { port, staticDirectory: webDist });
    await page.getByText('Reconnecting…', { exact: false }).waitFor({ state: 'detached' });
    await unreachable.waitFor({ state: 'detached' });
    suite.environment.api.enqueue(textReply('After the restart.'));
    await sendTurn(page, 'Second.');
    await waitForRunEnd(page, 'Succeeded');
    const text = await conversationText(page);
    expect(occurrences(text, 'Before the restart.')).toBe(1);
    expect(occurrences(text, 'After the restart.')).toBe(1);
  });
});
