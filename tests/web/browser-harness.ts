import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Daemon, DaemonOptions } from '@tether/daemon';
import type { SessionSnapshot } from '@tether/protocol';
import {
  type ClaudeTestEnvironment,
  type ClaudeTestEnvironmentOptions,
  createClaudeTestEnvironment,
} from '@tether/testkit';
import { type Browser, type BrowserContext, type Page, chromium } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon } from '../daemon/daemon-test-helpers.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const webDist = path.join(root, 'packages', 'web', 'dist');
// Every run writes its pictures under .test-results; the committed ones in docs/screenshots change
// only when asked (TETHER_UPDATE_SCREENSHOTS=1), so a test run leaves the checkout clean.
const screenshotDirectory =
  process.env.TETHER_UPDATE_SCREENSHOTS === '1'
    ? path.join(root, 'docs', 'screenshots')
    : path.join(root, '.test-results', 'screenshots');

/** Debian's chromium (apt-get install chromium), or the one TETHER_CHROMIUM_PATH names. */
export const chromiumPath = process.env.TETHER_CHROMIUM_PATH ?? '/usr/bin/chromium';
const installHint = 'sudo apt-get install -y chromium   (or set TETHER_CHROMIUM_PATH to a Chromium binary)';

/**
 * describe() for browser tests. Without a browser: in CI the suite fails (a test that throws);
 * locally the tests are skipped, counted as skipped in the closing line, and said so loudly.
 */
export function describeInBrowser(name: string, body: () => void): void {
  if (existsSync(chromiumPath)) {
    // A turn on a claude started cold (a first turn, one after a rewind or a restart) took up to ~25 s
    // on a loaded 2-core machine, against 1-3 s alone: the budgets are twice that, met at once when it goes well.
    describe(name, { timeout: 150_000 }, body);
    return;
  }
  if (process.env.CI) {
    describe(name, () => {
      it('needs Chromium', () => {
        throw new Error(
          `The browser tests need Chromium at ${chromiumPath}, and CI must run them: ${installHint} (.ci/run installs it).`,
        );
      });
    });
    return;
  }
  process.stderr.write(
    `\n!!! BROWSER TESTS DID NOT RUN (${name}): no Chromium at ${chromiumPath}.\n!!! Install it: ${installHint}\n\n`,
  );
  describe.skip(name, body);
}

export function launchBrowser(): Promise<Browser> {
  // Chromium refuses to start as root with its sandbox on (CI runs as root); nothing else is changed.
  const asRoot = process.getuid?.() === 0;
  return chromium.launch({ executablePath: chromiumPath, args: asRoot ? ['--no-sandbox'] : [] });
}

/** A fake API, the real claude binary and a daemon that serves the built UI. */
export async function startWebDaemon(
  options: Partial<DaemonOptions> = {},
  environmentOptions: ClaudeTestEnvironmentOptions = {},
): Promise<{ environment: ClaudeTestEnvironment; daemon: Daemon }> {
  if (!existsSync(path.join(webDist, 'index.html'))) {
    throw new Error(
      `The web UI is not built (${webDist} has no index.html): run "./dev npm run build" first (npm test does).`,
    );
  }
  const environment = await createClaudeTestEnvironment(environmentOptions);
  const daemon = await startTestDaemon(environment, { staticDirectory: webDist, ...options });
  return { environment, daemon };
}

/** What a page did that it must never do: talk to another origin, break the CSP, throw. */
export interface PageProblems {
  readonly foreignRequests: string[];
  readonly errors: string[];
}

export const desktopViewport = { width: 1200, height: 800 };
export const phoneViewport = { width: 375, height: 740 };

/**
 * A fresh browser context (its own sessionStorage, so its own token prompt) on the daemon's UI,
 * connected with the token. Records requests to other origins and page errors.
 */
export async function openConnectedPage(
  browser: Browser,
  daemon: Daemon,
  viewport = desktopViewport,
): Promise<{ context: BrowserContext; page: Page; problems: PageProblems }> {
  const context = await browser.newContext({
    viewport,
    deviceScaleFactor: 1,
    colorScheme: 'light',
    reducedMotion: 'reduce',
  });
  const page = await context.newPage();
  page.setDefaultTimeout(60_000);
  const problems: PageProblems = { foreignRequests: [], errors: [] };
  const origin = new URL(daemon.url).origin;
  page.on('request', (request) => {
    if (new URL(request.url()).origin !== origin) problems.foreignRequests.push(request.url());
  });
  page.on('pageerror', (error) => problems.errors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error' && !/Failed to load resource/.test(message.text()))
      problems.errors.push(message.text());
  });
  await page.goto(`${daemon.url}/`);
  await page.getByLabel('Daemon token').fill(daemon.token);
  await page.getByRole('button', { name: 'Connect' }).click();
  await page.getByRole('navigation', { name: 'Sessions' }).waitFor();
  return { context, page, problems };
}

/** Opens a session through the form; resolves with its id (from the address bar). */
export async function openSessionInPage(page: Page, workspace: string): Promise<string> {
  await page.getByRole('button', { name: 'New session' }).click();
  await page.getByLabel('Working directory').fill(workspace);
  await page.getByRole('button', { name: 'Open session' }).click();
  await page.waitForURL(/\/sessions\/ses_[0-9a-f]{32}$/);
  await page.getByText('No turns yet. Say something below.').waitFor();
  return /ses_[0-9a-f]{32}/.exec(page.url())![0];
}

export async function sendTurn(page: Page, text: string): Promise<void> {
  await page.getByLabel('Message', { exact: true }).fill(text);
  await page.getByLabel('Message', { exact: true }).press('Enter');
  await page.locator('.turn-input', { hasText: text }).waitFor();
}

/** The session's snapshot, read from the daemon as any client reads it. */
export async function readSnapshot(daemon: Daemon, sessionId: string): Promise<SessionSnapshot> {
  const response = await fetch(`${daemon.url}/v1/sessions/${sessionId}`, {
    headers: { authorization: `Bearer ${daemon.token}` },
  });
  return (await response.json()) as SessionSnapshot;
}

/** The conversation's visible text. */
export function conversationText(page: Page): Promise<string> {
  return page.locator('.conversation').innerText();
}

export function occurrences(text: string, part: string): number {
  return text.split(part).length - 1;
}

/** Waits until the page says the last run ended with this outcome label ("Succeeded", "Stopped", "Failed"). */
export async function waitForRunEnd(page: Page, label: 'Succeeded' | 'Stopped' | 'Failed'): Promise<void> {
  await page.locator('.run').last().locator('.run-status', { hasText: label }).waitFor();
}

/**
 * <name>.png of the page (see screenshotDirectory). Never fails a test: a read-only checkout simply
 * keeps the pictures it has.
 */
export async function saveScreenshot(page: Page, name: string): Promise<void> {
  try {
    await mkdir(screenshotDirectory, { recursive: true });
    await page.screenshot({
      path: path.join(screenshotDirectory, `${name}.png`),
      animations: 'disabled',
      caret: 'hide',
    });
  } catch (error) {
    process.stderr.write(`(screenshot ${name} not written: ${(error as Error).message.split('\n')[0]})\n`);
  }
}

/** What a browser test file shares: one daemon and one browser; a context (and page) per use. */
export interface BrowserSuite {
  readonly environment: ClaudeTestEnvironment;
  /** Replaceable: a test may restart the daemon under its pages. */
  daemon: Daemon;
  /** A connected page in a fresh context (its own token prompt); closed, and checked for problems, after the test. */
  connectedPage(viewport?: { width: number; height: number }): Promise<Page>;
  /** A bare context (before any token), closed after the test. */
  newContext(): Promise<BrowserContext>;
}

/**
 * Registers the file's hooks: daemon and browser before all tests, every context closed after each
 * test with its pages checked (nothing fetched from another origin, no CSP violation, no page
 * error), everything stopped after all.
 */
export function browserSuite(environmentOptions: ClaudeTestEnvironmentOptions = {}): BrowserSuite {
  let browser: Browser | undefined;
  let environment: ClaudeTestEnvironment | undefined;
  let daemon: Daemon | undefined;
  const contexts: BrowserContext[] = [];
  const problems: PageProblems[] = [];
  beforeAll(async () => {
    ({ environment, daemon } = await startWebDaemon({}, environmentOptions));
    browser = await launchBrowser();
  });
  afterEach(async () => {
    await Promise.all(contexts.splice(0).map((context) => context.close()));
    for (const seen of problems.splice(0)) {
      expect(seen.foreignRequests).toEqual([]);
      expect(seen.errors).toEqual([]);
    }
  });
  afterAll(async () => {
    await browser?.close();
    await daemon?.close();
    await environment?.cleanup();
  });
  return {
    get environment() {
      return environment!;
    },
    get daemon() {
      return daemon!;
    },
    set daemon(replacement: Daemon) {
      daemon = replacement;
    },
    async connectedPage(viewport) {
      const opened = await openConnectedPage(browser!, daemon!, viewport);
      contexts.push(opened.context);
      problems.push(opened.problems);
      return opened.page;
    },
    async newContext() {
      const context = await browser!.newContext();
      contexts.push(context);
      return context;
    },
  };
}
