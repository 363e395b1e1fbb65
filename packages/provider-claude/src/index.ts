export { createClaudeProvider } from './claude-provider.js';
export type { ClaudeProviderSettings } from './claude-provider.js';
export type { ClaudeTransport } from './connection/claude-connection.js';
export { claudeCapabilities, claudeSdkCapabilities } from './claude-capabilities.js';
// The oldest claude CLI supported (older ones are provider_unavailable, cli_too_old).
export { CLAUDE_CLI_MINIMUM_VERSION } from './binary/cli-version-window.js';
// The sdk transport: the version window, and the types a host's own query() (or a test's) is checked against.
export { CLAUDE_AGENT_SDK_VERSION, claudeAgentSdkVersionRange } from './sdk/load-agent-sdk.js';
export type {
  AgentSdkQuery,
  AgentSdkQueryFunction,
  AgentSdkOptions,
  AgentSdkUserMessage,
} from './sdk/agent-sdk-types.js';
// For tools that launch claude exactly as Tether does (the benchmark's raw loop, the testkit, the
// transcript recorder, the fake API's own CLI tests): the stream-json protocol flags, the whole
// command line and environment, and the binary the pinned Agent SDK package bundles.
export { buildClaudeArguments, protocolArguments } from './launch/build-arguments.js';
export { buildClaudeEnvironment } from './launch/build-environment.js';
export { claudeConfigDirectory } from './launch/claude-config-directory.js';
export { bundledBinaryPath } from './binary/resolve-binary.js';
// For hosts that show the agent's text on a terminal: the escape sequences Tether strips from it.
export { stripTerminalEscapes } from './codec/terminal-escapes.js';
// Start-up clean-up after a crash, for hosts that keep their own process records.
export { isAgentNice } from './process/agent-priority.js';
export { reapOrphans } from './process/reap-orphans.js';
export type { ClaudeProcessRecord } from './process/reap-orphans.js';
// For a host's own helper processes (the embedded PostgreSQL server): ended with the host, as its agents are.
export { bindProcessToHost } from './process/host-exit-watch.js';
export type { HostBoundProcess } from './process/host-exit-watch.js';

export const VERSION = '0.1.0';
