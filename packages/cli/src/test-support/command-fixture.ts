import { mkdir, mkdtemp, realpath } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type FakeAnthropicApi, startFakeAnthropicApi } from '@tether/fake-anthropic-api';
import { endTestProcessesAndFolder, testClaudePath } from '@tether/testkit';
import { afterEach, beforeEach } from 'vitest';
import { commandEnvironment } from './command-environment.js';

/** What each `tether` command test starts from; fresh for every test. */
export interface CommandFixture {
  /** The test's directory: home/, workspace/, tmp/ (and the extra directories asked for) under it. */
  readonly root: string;
  readonly workspace: string;
  readonly api: FakeAnthropicApi;
  /** commandEnvironment() for root, the fake API and the pinned claude, with TMPDIR under root (the CLI keeps files there). */
  readonly environment: Record<string, string>;
}

/** Registers the per-test set-up (directories, fake API, environment) and its tear-down; call at the top of a test file. */
export function useCommandFixture(
  prefix: string,
  options: { readonly directories?: readonly string[] } = {},
): CommandFixture {
  let current: CommandFixture | undefined;
  beforeEach(async () => {
    const root = await realpath(await mkdtemp(path.join(os.tmpdir(), prefix)));
    const directories = ['home', 'workspace', 'tmp', ...(options.directories ?? [])];
    await Promise.all(directories.map((directory) => mkdir(path.join(root, directory))));
    const api = await startFakeAnthropicApi();
    const environment = commandEnvironment(
      { root, apiUrl: api.url, claudePath: testClaudePath() },
      { TMPDIR: path.join(root, 'tmp') },
    );
    current = { root, workspace: path.join(root, 'workspace'), api, environment };
  });
  afterEach(async () => {
    if (!current) return;
    const { root, api, environment } = current;
    current = undefined;
    await api.close();
    // Every process a command starts ends with it: one still carrying this test's HOME (a claude, a
    // daemon, a tool) outlived the command that started it.
    await endTestProcessesAndFolder(
      environment.HOME!,
      root,
      'a test that SIGKILLs a tether process on purpose ends what it left first',
    );
  });
  const now = (): CommandFixture => {
    if (!current) throw new Error('the command fixture exists only inside a test');
    return current;
  };
  return {
    get root() {
      return now().root;
    },
    get workspace() {
      return now().workspace;
    },
    get api() {
      return now().api;
    },
    get environment() {
      return now().environment;
    },
  };
}
