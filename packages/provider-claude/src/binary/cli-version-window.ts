import { AgentError } from '@tether/protocol';
import { compareVersions, numericCore } from '../versions/compare-versions.js';

/**
 * The oldest claude CLI Tether supports: the oldest the conformance suite (tests/conformance, both
 * transports, the real binary) has passed on. 2.1.332 is the only version it has been run against
 * so far, so it is both floor and tested version; lower it only after the suite passes on an older one.
 */
export const CLAUDE_CLI_MINIMUM_VERSION = '2.1.332';

const updateHint = 'Update Claude Code (`claude update`, or npm install -g @anthropic-ai/claude-code@latest)';

/**
 * provider_unavailable (cli_too_old) when `versionOutput` (what `claude --version` printed) names a
 * version older than the floor; undefined otherwise. An unreadable version is not held against the
 * binary: what it does when started says more than a guess.
 */
export function cliTooOld(binaryPath: string, versionOutput: string): AgentError | undefined {
  const found = numericCore(versionOutput);
  if (!found || compareVersions(found, numericCore(CLAUDE_CLI_MINIMUM_VERSION)!) >= 0) return undefined;
  const installedVersion = found.join('.');
  return new AgentError({
    code: 'provider_unavailable',
    message: `The claude CLI at ${binaryPath} is version ${installedVersion}; Tether needs ${CLAUDE_CLI_MINIMUM_VERSION} or newer. ${updateHint}, or point TETHER_CLAUDE_PATH (--claude-path) at a newer one.`,
    // Updating the CLI is all a retry needs.
    retryable: true,
    details: { reason: 'cli_too_old', binaryPath, installedVersion, minimumVersion: CLAUDE_CLI_MINIMUM_VERSION },
  });
}
