/** The claude binary, the explicit child environment and the argv shared by both legs. */
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { buildClaudeArguments, buildClaudeEnvironment, bundledBinaryPath } from '@tether/provider-claude';

/** The claude binary the tests use (the bundled one, found as the provider finds it); null (with the reason) when it is missing. */
export function findClaudeBinary() {
  const forBench = process.env.TETHER_BENCH_CLAUDE_PATH;
  if (forBench) {
    return existsSync(forBench) ? { path: forBench } : { path: null, reason: `The claude binary given by TETHER_BENCH_CLAUDE_PATH (${forBench}) does not exist.` };
  }
  const bundled = bundledBinaryPath();
  if (bundled) return { path: bundled };
  return {
    path: null,
    reason: 'The claude binary is missing (the @anthropic-ai/claude-agent-sdk platform package is not installed). Run "./dev npm ci" and try again.',
  };
}

/**
 * The environment the claude child starts from, built explicitly as the testkit does: a
 * temporary HOME, the fake API's URL, a dummy key, no nonessential traffic, nothing inherited.
 */
export async function baseEnvironment({ root, apiUrl }) {
  const home = path.join(root, 'home');
  await mkdir(home, { recursive: true });
  return {
    PATH: [path.dirname(process.execPath), '/usr/local/bin', '/usr/bin', '/bin'].join(path.delimiter),
    HOME: home,
    SHELL: '/bin/bash',
    LANG: 'C.UTF-8',
    TMPDIR: os.tmpdir(),
    ANTHROPIC_BASE_URL: apiUrl,
    ANTHROPIC_API_KEY: 'sk-tether-bench',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    CLAUDE_CODE_MAX_RETRIES: '1',
  };
}

/** Exactly what Tether's provider gives the child for a new session with no configuration. */
export function rawLaunch({ environment, providerSessionId }) {
  return {
    argv: buildClaudeArguments({ configuration: {}, conversation: { kind: 'new', providerSessionId }, ephemeral: false }),
    env: buildClaudeEnvironment({ inherited: environment }),
  };
}
