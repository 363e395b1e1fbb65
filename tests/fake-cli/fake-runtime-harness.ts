import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type ClaudeProviderSettings, type ClaudeTransport, createClaudeProvider } from '@tether/provider-claude';
import { type AgentRuntime, createAgentRuntime } from '@tether/runtime';
import { type FakeCliStep, fakeClaudeCliPath, fakeCliScript } from '@tether/testkit';
import { afterEach, beforeEach } from 'vitest';

/**
 * The set-up the scripted-fault tests share: a fresh temporary root per test (HOME and workspace), one
 * runtime whose Claude provider runs the fake CLI, and both torn down after the test.
 */
export interface FakeRuntimeHarness {
  /** The current test's temporary directory (HOME and workspace). */
  readonly root: string;
  /** A runtime whose one provider has `settings` (claudePath defaults to the fake CLI), and a session in root. */
  start(settings: ClaudeProviderSettings): Promise<{ runtime: AgentRuntime; sessionId: string }>;
  /** start() with the scripted fake CLI playing `turns` on `transport`. */
  open(
    transport: ClaudeTransport,
    turns: FakeCliStep[][],
    provider?: ClaudeProviderSettings,
  ): Promise<{ runtime: AgentRuntime; sessionId: string }>;
}

/** Registers the per-test set-up and tear-down; call at the top of a test file. */
export function useFakeRuntime(prefix: string): FakeRuntimeHarness {
  let root = '';
  let runtime: AgentRuntime | undefined;
  beforeEach(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), prefix));
  });
  afterEach(async () => {
    await runtime?.shutdown();
    runtime = undefined;
    await rm(root, { recursive: true, force: true });
  });
  async function start(settings: ClaudeProviderSettings) {
    runtime = await createAgentRuntime({
      providers: [createClaudeProvider({ claudePath: fakeClaudeCliPath(), ...settings })],
    });
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: root } });
    return { runtime, sessionId };
  }
  return {
    get root() {
      return root;
    },
    start,
    open(transport, turns, provider = {}) {
      const environment = {
        PATH: [path.dirname(process.execPath), '/usr/bin', '/bin'].join(path.delimiter),
        HOME: root,
        ...fakeCliScript(turns),
      };
      return start({ transport, environment, ...provider });
    },
  };
}
