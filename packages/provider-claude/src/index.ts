export { createClaudeProvider } from './claude-provider.js';
export type { ClaudeProviderSettings } from './claude-provider.js';
export { claudeCapabilities, claudeSdkCapabilities } from './claude-capabilities.js';
export type { ClaudeTransport } from './connection/claude-connection.js';
export { CLAUDE_AGENT_SDK_VERSION, claudeAgentSdkVersionRange } from './sdk/load-agent-sdk.js';
export type { AgentSdkQuery, AgentSdkQueryFunction, AgentSdkOptions, AgentSdkUserMessage } from './sdk/agent-sdk-types.js';
export { buildClaudeArguments } from './launch/build-arguments.js';
export type { ArgumentOptions, ConversationStart } from './launch/build-arguments.js';
export { buildClaudeEnvironment } from './launch/build-environment.js';
export type { EnvironmentOptions } from './launch/build-environment.js';
export { cliPermissionModes, neutralPermissionModes } from './launch/permission-modes.js';
export { resolveClaudeBinary, bundledBinaryPath } from './binary/resolve-binary.js';
export type { ResolvedBinary, BinarySource } from './binary/resolve-binary.js';
export { probeClaudeBinary } from './binary/probe-binary.js';

export const VERSION = '0.1.0';
export { reapOrphans } from './process/reap-orphans.js';
export type { ClaudeProcessRecord, ReapOptions } from './process/reap-orphans.js';
