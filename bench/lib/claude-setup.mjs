/** The claude binary, the explicit child environment and the argv shared by both legs. */
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { buildClaudeArguments, buildClaudeEnvironment, bundledBinaryPath } from '@tether/provider-claude';
import { claudeChildEnvironment } from '@tether/testkit';

/** The claude binary the tests use (the bundled one, found as the provider finds it); null (with the reason) when it is missing. */
export function findClaudeBinary() {
  const forBench = process.env.TETHER_BENCH_CLAUDE_PATH;
  if (forBench) {
    return existsSync(forBench)
      ? { path: forBench }
      : { path: null, reason: `The claude binary given by TETHER_BENCH_CLAUDE_PATH (${forBench}) does not exist.` };
  }
  const bundled = bundledBinaryPath();
  if (bundled) return { path: bundled };
  return {
    path: null,
    reason:
      'The claude binary is missing (the @anthropic-ai/claude-agent-sdk platform package is not installed). Run "./dev npm ci" and try again.',
  };
}

/**
 * The environment the claude child starts from: the testkit's, as every real-binary test has it (a
 * temporary HOME and TMPDIR under `root`, the fake API's URL, a dummy key, nothing inherited).
 */
export async function baseEnvironment({ root, apiUrl }) {
  const home = path.join(root, 'home');
  const temporaryDirectory = path.join(root, 'tmp');
  await Promise.all([mkdir(home, { recursive: true }), mkdir(temporaryDirectory, { recursive: true })]);
  return claudeChildEnvironment({ home, temporaryDirectory, apiUrl, maxRetries: 1, sandbox: false });
}

/** Exactly what Tether's provider gives the child for a new session with no configuration. */
export function rawLaunch({ environment, providerSessionId }) {
  return {
    argv: buildClaudeArguments({
      configuration: {},
      conversation: { kind: 'new', providerSessionId },
      ephemeral: false,
    }),
    env: buildClaudeEnvironment({ inherited: environment }),
  };
}
