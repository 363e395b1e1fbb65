import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { crc32, deflateSync } from 'node:zlib';
import { type FakeReply, textReply, toolUseReply } from '@tether/fake-anthropic-api';
import type { Page } from 'playwright-core';
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

/** A PNG a browser can decode (the testkit's samples are headers only): width×height pixels of one colour. */
function decodablePng(width: number, height: number, rgba: readonly [number, number, number, number]): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const checksum = Buffer.alloc(4);
    checksum.writeUInt32BE(crc32(body));
    return Buffer.concat([length, body, checksum]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 6, 0, 0, 0], 8);
  const row = Buffer.concat([Buffer.from([0]), Buffer.from(Array.from({ length: width }, () => rgba).flat())]);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(Buffer.concat(Array.from({ length: height }, () => row)))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

// Runs in the page (the tests are type-checked without the DOM library, so page code is a string):
// files as the browser gets them from a real clipboard paste or drop, a DataTransfer holding File objects.
const transferScript = `({ how, files }) => {
  const transfer = new DataTransfer();
  for (const file of files) {
    const bytes = Uint8Array.from(atob(file.base64), (character) => character.charCodeAt(0));
    transfer.items.add(new File([bytes], file.name, { type: file.type }));
  }
  const init = { bubbles: true, cancelable: true };
  if (how === 'paste') {
    const field = document.querySelector('textarea[aria-label="Message"]');
    field.dispatchEvent(new ClipboardEvent('paste', { ...init, clipboardData: transfer }));
  } else {
    const form = document.querySelector('form[aria-label="Send a turn"]');
    form.dispatchEvent(new DragEvent('dragover', { ...init, dataTransfer: transfer }));
    form.dispatchEvent(new DragEvent('drop', { ...init, dataTransfer: transfer }));
  }
}`;

async function transferFiles(
  page: Page,
  how: 'paste' | 'drop',
  files: readonly { name: string; type: string; base64: string }[],
): Promise<void> {
  await page.evaluate(`(${transferScript})(${JSON.stringify({ how, files })})`);
}

/** What the last request to the model carried, as JSON text. */
function lastTurnRequest(suite: ReturnType<typeof browserSuite>): string {
  return JSON.stringify(suite.environment.api.requests.filter((request) => request.kind === 'turn').at(-1)!.body);
}

/**
 * Sends each question in turn, the fake model answering it (a text, or the model calls a tool and
 * then says that text), and waits for each run to succeed.
 */
async function converse(
  suite: ReturnType<typeof browserSuite>,
  page: Page,
  exchanges: readonly (readonly [question: string, answer: string, toolCall?: FakeReply])[],
): Promise<void> {
  for (const [question, answer, toolCall] of exchanges) {
    if (toolCall !== undefined) suite.environment.api.enqueue(toolCall);
    suite.environment.api.enqueue(textReply(answer));
    await sendTurn(page, question);
    await waitForRunEnd(page, 'Succeeded');
  }
}

describeInBrowser('the web UI: images, forks and rewinds in a real browser', () => {
  const suite = browserSuite();

  it('pastes an image into the composer, sends it with the text, and shows it from the blob route', async () => {
    const page = await suite.connectedPage();
    const sessionId = await openSessionInPage(page, suite.environment.workspace);
    const red = decodablePng(160, 90, [220, 30, 30, 255]);
    const blue = decodablePng(90, 90, [30, 30, 220, 255]);
    const previews = page.getByRole('list', { name: 'Images to send' });

    // Not an image, whatever its name says: refused in the page, nothing attached.
    await transferFiles(page, 'paste', [
      { name: 'notes.png', type: 'image/png', base64: Buffer.from('plain text').toString('base64') },
    ]);
    await page.getByRole('alert').getByText('notes.png is not a PNG, JPEG, GIF or WebP image.').waitFor();
    expect(await previews.count()).toBe(0);

    await transferFiles(page, 'paste', [{ name: 'red.png', type: 'image/png', base64: red.toString('base64') }]);
    await transferFiles(page, 'drop', [{ name: 'blue.png', type: 'image/png', base64: blue.toString('base64') }]);
    await previews.getByRole('img', { name: 'blue.png (90×90)' }).waitFor();
    expect(await previews.getByRole('img').count()).toBe(2);
    expect(await page.getByRole('alert').count()).toBe(0);
    await saveScreenshot(page, 'composer-images');
    await previews.getByRole('button', { name: 'Remove blue.png' }).click();
    expect(await previews.getByRole('img').count()).toBe(1);

    const blobAnswers: { path: string; status: number; body: Promise<Buffer> }[] = [];
    page.on('response', (response) => {
      const path = new URL(response.url()).pathname;
      if (/\/blobs\/[0-9a-f]{64}$/.test(path))
        blobAnswers.push({ path, status: response.status(), body: response.body() });
    });
    suite.environment.api.enqueue(textReply('A red rectangle.'));
    await sendTurn(page, 'What colour is this?');
    await waitForRunEnd(page, 'Succeeded');
    expect(await previews.count()).toBe(0);
    // The model got the pasted bytes as an image block.
    expect(lastTurnRequest(suite)).toContain(red.toString('base64'));
    expect(lastTurnRequest(suite)).not.toContain(blue.toString('base64'));

    const image = page.locator('.run').last().getByRole('img', { name: 'Image 1 of the turn (PNG, 160×90)' });
    await image.waitFor();
    // The page read the pasted bytes from the blob route, and the browser decoded them: 160×90 red pixels.
    const sha256 = createHash('sha256').update(red).digest('hex');
    expect(blobAnswers.map(({ path, status }) => `${status} ${path}`)).toEqual([
      `200 /v1/sessions/${sessionId}/blobs/${sha256}`,
    ]);
    expect(Buffer.compare(await blobAnswers[0]!.body, red)).toBe(0);
    await expect.poll(() => image.evaluate((element) => element.complete && element.naturalWidth)).toBe(160);
    expect(await image.getAttribute('src')).toMatch(/^blob:/);
    const pixel = await image.evaluate((element) => {
      const canvas = element.ownerDocument.createElement('canvas');
      const context = canvas.getContext('2d');
      context.drawImage(element, 0, 0);
      return [...context.getImageData(1, 1, 1, 1).data];
    });
    expect(pixel).toEqual([220, 30, 30, 255]);
    await saveScreenshot(page, 'turn-with-image');
  });

  it('forks from a turn and lands on the fork, which says where it came from and carries only that far', async () => {
    const page = await suite.connectedPage();
    const sourceId = await openSessionInPage(page, suite.environment.workspace);
    await converse(suite, page, [
      ['The first question.', 'First answer.'],
      ['The second question.', 'Second answer.'],
    ]);

    await page.getByRole('article', { name: 'Turn 1' }).getByRole('button', { name: 'Fork from here' }).click();
    await page.waitForURL((url) => url.pathname.startsWith('/sessions/') && !url.pathname.includes(sourceId));
    const forkId = /ses_[0-9a-f]{32}/.exec(page.url())![0];
    const origin = page.locator('.fork-origin');
    await origin.getByText('Forked from The first question. at turn 1').waitFor();
    // The conversation it starts with is shown as the source shows it, up to that turn only.
    const inherited = page.locator('.inherited-turns');
    await inherited.getByText('The conversation so far: 1 turn from The first question.').waitFor();
    await inherited.getByText('First answer.').waitFor();
    expect(await inherited.innerText()).not.toContain('The second question.');
    expect(await inherited.getByRole('button').count()).toBe(0);
    // The fork runs with its source's model and mode, which its own events never name (they are not new to it).
    const fork = await readSnapshot(suite.daemon, forkId);
    expect([fork.model, fork.permissionMode]).not.toContain(null);
    const facts = page.locator('.session-header .session-facts');
    await facts.getByText(fork.model!, { exact: true }).waitFor();
    expect(await facts.innerText()).not.toContain('default mode');
    await saveScreenshot(page, 'fork-origin');
    // In the list the fork has its source's title: it is named a fork, the source is not.
    const listed = page.locator('.session-item', { hasText: 'The first question.' });
    await expect.poll(() => listed.count()).toBe(2);
    await page.getByRole('link', { name: 'The first question. (fork) —', exact: false }).waitFor();
    expect(await listed.locator('.session-item-fork').count()).toBe(1);

    await converse(suite, page, [['A question in the fork.', 'Answer in the fork.']]);
    const forkRequest = lastTurnRequest(suite);
    expect(forkRequest).toContain('The first question.');
    expect(forkRequest).not.toContain('The second question.');

    // Back to the source: untouched, and its first turn names the fork.
    await origin.getByRole('link', { name: 'The first question.' }).click();
    await page.waitForURL((url) => url.pathname === `/sessions/${sourceId}`);
    await page.getByRole('article', { name: 'Turn 1' }).getByRole('link', { name: forkId }).waitFor();
    expect(await page.getByRole('article', { name: /^Turn/ }).count()).toBe(2);

    // A fork of the fork starts with both: the source's turn the first fork carried, and the fork's own.
    await page.goto(page.url().replace(sourceId, forkId));
    await page.getByRole('article', { name: 'Turn 1' }).getByRole('button', { name: 'Fork from here' }).click();
    await page.waitForURL(
      (url) =>
        url.pathname.startsWith('/sessions/') && !url.pathname.includes(forkId) && !url.pathname.includes(sourceId),
    );
    const twice = page.locator('.inherited-turns');
    await twice.getByText('The conversation so far: 2 turns from The first question.').waitFor();
    const shown = await twice.innerText();
    expect(shown.indexOf('First answer.')).toBeGreaterThan(-1);
    expect(shown.indexOf('Answer in the fork.')).toBeGreaterThan(shown.indexOf('First answer.'));
    expect(shown).not.toContain('The second question.');
  });

  it('rewinds to a turn after a confirmation, files too: that turn and later ones are marked, and leave the context', async () => {
    const page = await suite.connectedPage();
    const file = path.join(suite.environment.workspace, 'rewound.txt');
    writeFileSync(file, 'version zero');
    const write = (content: string) => toolUseReply('Write', { file_path: file, content });
    // Auto-edit: the writes need no approval.
    await page.getByRole('button', { name: 'New session' }).click();
    await page.getByLabel('Working directory').fill(suite.environment.workspace);
    await page.getByLabel('Permission mode').selectOption('auto_edit');
    await page.getByRole('button', { name: 'Open session' }).click();
    await page.getByText('No turns yet. Say something below.').waitFor();
    await converse(suite, page, [
      ['A turn to keep.', 'Kept answer.', write('version one')],
      ['A turn to drop.', 'Dropped answer.', write('version two')],
    ]);
    expect(readFileSync(file, 'utf8')).toBe('version two');

    // By keyboard, after a reload (the turns' actions render once the agent's capabilities are in):
    // the confirmation takes the focus from the button it replaces, and Cancel hands it back.
    await page.reload();
    const second = page.getByRole('article', { name: 'Turn 2' });
    const focused = () => page.evaluate<string>('document.activeElement?.tagName ?? ""');
    await second.getByRole('button', { name: 'Rewind to here' }).focus();
    await page.keyboard.press('Enter');
    const confirm = second.getByRole('group', { name: 'Confirm the rewind to turn 2' });
    await confirm.waitFor();
    await expect.poll(focused).not.toBe('BODY');
    expect(await confirm.evaluate((group) => group.contains(group.ownerDocument.activeElement))).toBe(true);
    // Escape says no, as Cancel does.
    await page.keyboard.press('Escape');
    await confirm.waitFor({ state: 'detached' });
    await expect.poll(focused).toBe('BUTTON');
    await second.getByRole('button', { name: 'Rewind to here' }).click();
    expect(await confirm.innerText()).toContain('The agent forgets this turn and every later one');
    await confirm.getByLabel('Also restore files to how they were before this turn').check();
    await confirm.getByRole('button', { name: 'Rewind', exact: true }).click();
    await second
      .getByText("Rewound to before this turn: no longer in the agent's context; files restored (1 file", {
        exact: false,
      })
      .waitFor();
    await page
      .getByRole('status')
      .getByText('Rewound to before turn 2: the next turn continues from there. 1 file restored.')
      .waitFor();
    expect(readFileSync(file, 'utf8')).toBe('version one');
    expect(await page.getByRole('article', { name: 'Turn 1' }).locator('.rewind-note').count()).toBe(0);
    expect(await second.getByRole('button', { name: 'Rewind to here' }).count()).toBe(0);
    await saveScreenshot(page, 'rewound-turn');

    await converse(suite, page, [['And now?', 'After the rewind.']]);
    const request = lastTurnRequest(suite);
    expect(request).toContain('A turn to keep.');
    expect(request).not.toContain('A turn to drop.');
    expect(await page.getByRole('article', { name: 'Turn 3' }).locator('.rewind-note').count()).toBe(0);
  });

  it('offers the agent’s models in the new-session form, and any other name can still be typed', async () => {
    const page = await suite.connectedPage();
    const listed = await fetch(`${suite.daemon.url}/v1/providers/claude/models`, {
      headers: { authorization: `Bearer ${suite.daemon.token}` },
    });
    expect(listed.status).toBe(200);
    const { models } = (await listed.json()) as { models: { id: string }[] };
    expect(models.length).toBeGreaterThan(0);
    await page.getByRole('button', { name: 'New session' }).click();
    const field = page.getByLabel('Model');
    const suggested = () =>
      field.evaluate((input) => [...(input.list?.options ?? [])].map((option: { value: string }) => option.value));
    await expect.poll(suggested).toEqual(models.map((model) => model.id));
    await field.fill('a-model-of-my-own');
    expect(await field.inputValue()).toBe('a-model-of-my-own');
  });

  it('a session opened with a model and mode says so in its header before the agent first reports them', async () => {
    const page = await suite.connectedPage();
    await page.getByRole('button', { name: 'New session' }).click();
    await page.getByLabel('Working directory').fill(suite.environment.workspace);
    await page.getByLabel('Model').fill('claude-chosen-in-the-form');
    await page.getByLabel('Permission mode').selectOption('plan');
    await page.getByRole('button', { name: 'Open session' }).click();
    await page.getByText('No turns yet. Say something below.').waitFor();
    const facts = page.locator('.session-header .session-facts');
    await facts.getByText('claude-chosen-in-the-form', { exact: true }).waitFor();
    await facts.getByText('Plan', { exact: true }).waitFor();
    // The Controls list starts at the session's mode (it read the default, and "Set mode" switched to it).
    await page.getByText('Controls', { exact: true }).click();
    await expect.poll(() => page.getByLabel('Permission mode').inputValue()).toBe('plan');
    // And follows a change made elsewhere.
    const sessionId = /ses_[0-9a-f]{32}/.exec(page.url())![0];
    const changed = await fetch(`${suite.daemon.url}/v1/commands`, {
      method: 'POST',
      headers: { authorization: `Bearer ${suite.daemon.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'set_permission_mode', commandId: 'elsewhere-1', sessionId, mode: 'auto_edit' }),
    });
    expect(changed.status).toBe(200);
    await expect.poll(() => page.getByLabel('Permission mode').inputValue()).toBe('auto_edit');
  });
});
