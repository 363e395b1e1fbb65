import { mkdir, mkdtemp, realpath } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type FakeAnthropicApi, type FakeResponder, startFakeAnthropicApi } from '@tether/fake-anthropic-api';
import {
  type ClaudeProviderSettings,
  type ClaudeTransport,
  bundledBinaryPath,
  createClaudeProvider,
} from '@tether/provider-claude';
import type { AgentProviderV1 } from '@tether/provider-spec';
import { type AgentRuntime, type TetherStore, createAgentRuntime } from '@tether/runtime';
import { endProcessesWithEnvironment, endTestProcessesAndFolder } from './kill-processes.js';

export interface ClaudeTestEnvironmentOptions {
  /** Sets IS_SANDBOX=1 so the CLI accepts bypass mode as root. Off unless a test needs it. */
  readonly sandbox?: boolean;
  /** CLAUDE_CODE_MAX_RETRIES for the CLI (default 1, so API-error tests end quickly). */
  readonly maxRetries?: number;
  readonly responder?: FakeResponder;
  /** The Claude transport every provider of this environment uses unless a test says otherwise (default cli). */
  readonly transport?: ClaudeTransport;
}

export interface ClaudeTestEnvironment {
  readonly api: FakeAnthropicApi;
  /** A temporary HOME: the CLI writes ~/.claude.json and its transcripts here. */
  readonly home: string;
  /** A temporary directory to use as the session's workspace. */
  readonly workspace: string;
  readonly claudePath: string;
  /** The whole environment the claude child gets: built here, nothing inherited by accident. */
  readonly environment: Readonly<Record<string, string>>;
  readonly transport: ClaudeTransport;
  provider(settings?: ClaudeProviderSettings): AgentProviderV1;
  /** A runtime over a Claude provider in this environment; shut down by cleanup(). */
  runtime(options?: { store?: TetherStore; provider?: ClaudeProviderSettings }): Promise<AgentRuntime>;
  /**
   * For a test that killed a Tether process on purpose (SIGKILL leaves its agents to end on their own):
   * SIGKILLs every process still carrying this HOME and waits until they are gone. Returns their pids.
   */
  killProcessesLeft(): Promise<number[]>;
  /**
   * Shuts the runtimes down, then fails (after killing them) if any process carrying this HOME is
   * still running: every process Tether starts ends with it. Then removes the HOME and workspace.
   */
  cleanup(): Promise<void>;
}

/**
 * The pinned claude binary (the bundled one, found as the provider finds it). Missing means the
 * install is broken: fail loudly, never skip.
 */
export function testClaudePath(): string {
  const bundled = bundledBinaryPath();
  if (!bundled) {
    throw new Error(
      'The claude binary for tests is missing (@anthropic-ai/claude-agent-sdk platform package). Run "./dev npm ci".',
    );
  }
  return bundled;
}

/**
 * The whole environment a claude child gets against the fake API, built here with nothing inherited
 * by accident: the given HOME and TMPDIR, a fake key, no nonessential traffic, few retries, and
 * IS_SANDBOX=1 only when asked for (bypass mode as root). The benchmark starts its children with it too.
 */
export function claudeChildEnvironment(options: {
  readonly home: string;
  readonly temporaryDirectory: string;
  readonly apiUrl: string;
  readonly maxRetries: number;
  readonly sandbox: boolean;
}): Record<string, string> {
  return {
    PATH: [path.dirname(process.execPath), '/usr/local/bin', '/usr/bin', '/bin'].join(path.delimiter),
    HOME: options.home,
    SHELL: '/bin/bash',
    LANG: 'C.UTF-8',
    TMPDIR: options.temporaryDirectory,
    ANTHROPIC_BASE_URL: options.apiUrl,
    ANTHROPIC_API_KEY: 'sk-tether-test',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    CLAUDE_CODE_MAX_RETRIES: String(options.maxRetries),
    ...(options.sandbox ? { IS_SANDBOX: '1' } : {}),
  };
}

/**
 * A fake Anthropic API on loopback plus a temporary HOME and workspace, with the explicit
 * environment the real claude binary needs to run against it: no credentials, no network.
 */
export async function createClaudeTestEnvironment(
  options: ClaudeTestEnvironmentOptions = {},
): Promise<ClaudeTestEnvironment> {
  const claudePath = testClaudePath();
  const root = await realpath(await mkdtemp(path.join(os.tmpdir(), 'tether-test-')));
  const home = path.join(root, 'home');
  const workspace = path.join(root, 'workspace');
  // The CLI keeps tool output under $TMPDIR/claude-<uid>/: a private TMPDIR goes away with the test.
  const temporary = path.join(root, 'tmp');
  await Promise.all([mkdir(home), mkdir(workspace), mkdir(temporary)]);
  const api = await startFakeAnthropicApi(options.responder ? { responder: options.responder } : {});
  const environment = claudeChildEnvironment({
    home,
    temporaryDirectory: temporary,
    apiUrl: api.url,
    maxRetries: options.maxRetries ?? 1,
    sandbox: options.sandbox === true,
  });
  const runtimes: AgentRuntime[] = [];
  const environmentHandle: ClaudeTestEnvironment = {
    api,
    home,
    workspace,
    claudePath,
    environment,
    transport: options.transport ?? 'cli',
    provider(settings = {}) {
      return createClaudeProvider({ claudePath, environment, transport: options.transport ?? 'cli', ...settings });
    },
    async runtime(runtimeOptions = {}) {
      const runtime = await createAgentRuntime({
        providers: [environmentHandle.provider(runtimeOptions.provider)],
        ...(runtimeOptions.store ? { store: runtimeOptions.store } : {}),
      });
      runtimes.push(runtime);
      return runtime;
    },
    killProcessesLeft: async () => (await endProcessesWithEnvironment('HOME', home)).map((process) => process.pid),
    async cleanup() {
      await Promise.allSettled(runtimes.map((runtime) => runtime.shutdown()));
      await api.close();
      await endTestProcessesAndFolder(home, root, 'a test that kills a Tether process calls killProcessesLeft() first');
    },
  };
  return environmentHandle;
}
