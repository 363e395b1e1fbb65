import { existsSync } from 'node:fs';
import path from 'node:path';
import { textReply, toolUseReply } from '@tether/fake-anthropic-api';
import { createGitRepository } from '@tether/testkit';
import { expect, it } from 'vitest';
import {
  browserSuite,
  describeInBrowser,
  phoneViewport,
  readSnapshot,
  saveScreenshot,
  sendTurn,
  waitForRunEnd,
} from './browser-harness.js';

describeInBrowser('the web UI: a session in its own git worktree, in a real browser', () => {
  const suite = browserSuite();

  const snapshotOf = (sessionId: string) => readSnapshot(suite.daemon, sessionId);

  it('opens a session in a worktree through the form, shows what a turn changed, the branch and count, and the diff', async () => {
    const page = await suite.connectedPage();
    // A repository with one commit on main, under the test's temporary home; git told nothing by this shell.
    const repository = path.join(suite.environment.home, 'repository');
    const git = await createGitRepository(
      repository,
      { 'README.md': 'A repository.\n' },
      { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: suite.environment.home, LC_ALL: 'C' },
    );
    await page.getByRole('button', { name: 'New session' }).click();
    await page.getByLabel('Working directory').fill(repository);
    await page.getByLabel('In a new git worktree', { exact: false }).check();
    await page.getByLabel('Permission mode').selectOption('auto_edit');

    // A base the repository does not have: refused with the daemon's message, and no session is opened.
    await page.getByLabel('Base ref', { exact: true }).fill('no-such-ref');
    await page.getByRole('button', { name: 'Open session' }).click();
    const refusal = page.getByRole('alert');
    await refusal.waitFor();
    expect(await refusal.innerText()).toContain('no-such-ref');
    expect(new URL(page.url()).pathname).toBe('/new');

    await page.getByLabel('Base ref', { exact: true }).fill('main');
    await page.getByLabel('Branch', { exact: true }).fill('web/notes');
    await page.getByRole('button', { name: 'Open session' }).click();
    await page.waitForURL(/\/sessions\/ses_[0-9a-f]{32}$/);
    const sessionId = /ses_[0-9a-f]{32}/.exec(page.url())![0];
    const workspaceLine = page.locator('.session-header .workspace-line');
    await workspaceLine.getByText('Branch web/notes').waitFor();
    const worktree = (await snapshotOf(sessionId)).workspaceStatus?.worktree;
    expect(worktree).toMatchObject({ branch: 'web/notes', repository });

    // Auto-edit: the model's write needs no approval; it lands in the worktree only.
    suite.environment.api.enqueue(
      toolUseReply('Write', {
        file_path: path.join(worktree!.path, 'notes.txt'),
        content: 'first line\nsecond line\n',
      }),
      textReply('Wrote the notes.'),
    );
    await sendTurn(page, 'Write the notes.');
    await waitForRunEnd(page, 'Succeeded');
    const changed = page
      .getByRole('article', { name: 'Turn 1' })
      .getByRole('list', { name: 'Files this turn changed' });
    await changed.getByText('notes.txt').waitFor();
    expect(await changed.innerText()).toMatch(/notes\.txt\s+new\s+\+2 −0/);
    await workspaceLine.getByText('1 changed file').waitFor();
    expect(existsSync(path.join(worktree!.path, 'notes.txt'))).toBe(true);
    expect(existsSync(path.join(repository, 'notes.txt'))).toBe(false);
    const listed = page.getByRole('navigation', { name: 'Sessions' }).locator('.session-item-selected');
    await listed.getByText('Branch web/notes').waitFor();
    await listed.getByText('1 changed file').waitFor();
    await saveScreenshot(page, 'worktree-session');

    await workspaceLine.getByRole('link', { name: 'Review changes' }).click();
    await page.waitForURL((url) => url.pathname === `/sessions/${sessionId}/diff`);
    const view = page.getByRole('region', { name: 'Changes' });
    await view.getByRole('heading', { name: 'Changes on web/notes' }).waitFor();
    expect(await view.getByRole('list', { name: 'Changed files' }).innerText()).toMatch(/notes\.txt\s+added\s+\+2 −0/);
    const fileDiff = view.getByRole('article', { name: 'Diff of notes.txt' });
    const addedLines = await fileDiff.locator('.diff-line-added').allInnerTexts();
    expect(addedLines.map((line) => line.trimEnd())).toEqual(['+first line', '+second line']);
    await saveScreenshot(page, 'session-diff');

    // Closed with its work: the worktree is kept, and the header says where and on which branch.
    await view.getByRole('link', { name: '← The conversation' }).click();
    await page.getByRole('button', { name: 'Close session' }).click();
    await workspaceLine
      .getByText(`Worktree kept at ${worktree!.path} on branch web/notes: it has uncommitted changes.`)
      .waitFor();
    expect(existsSync(path.join(worktree!.path, 'notes.txt'))).toBe(true);

    // Deleting it never throws that work away unasked: refused without the tick, done with it.
    await page.getByRole('button', { name: 'Delete the session' }).click();
    const confirm = page.getByRole('group', { name: 'Confirm' });
    const discard = confirm.getByLabel('Also remove the worktree and its branch, discarding that work', {
      exact: false,
    });
    await confirm.getByRole('button', { name: 'Delete for good' }).click();
    await page.getByRole('alert').getByText('web/notes', { exact: false }).waitFor();
    expect(existsSync(worktree!.path)).toBe(true);
    await page.getByRole('button', { name: 'Delete the session' }).click();
    await discard.check();
    await confirm.getByRole('button', { name: 'Delete for good' }).click();
    await page.waitForURL((url) => url.pathname === '/');
    // The list says what went with the session, on a phone's screen too (where the list is all there is).
    const deleted = page
      .getByRole('status')
      .getByText(`Session deleted with its worktree ${worktree!.path} and branch web/notes.`);
    await deleted.waitFor();
    await page.setViewportSize(phoneViewport);
    expect(await deleted.isVisible()).toBe(true);
    expect(existsSync(worktree!.path)).toBe(false);
    expect(git('branch', '--list', 'web/notes').trim()).toBe('');
  });
});
