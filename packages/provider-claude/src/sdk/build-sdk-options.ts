import type { LaunchPlan } from '../connection/claude-connection.js';
import { fileCheckpointingVariable } from '../launch/build-environment.js';
import { cliPermissionModes } from '../launch/permission-modes.js';
import type { AgentSdkLaunchOptions } from './agent-sdk-types.js';

/**
 * The query() options for a launch plan: the same launch the cli transport makes with
 * buildClaudeArguments, as a value (tests assert it without spawning). What differs on the wire
 * is the SDK's own doing: no `-p`, `--permission-prompt-tool=stdio` as one argument, lists joined
 * by commas, and its environment additions (CLAUDE_CODE_ENTRYPOINT=sdk-ts, …).
 */
export function buildSdkOptions(plan: LaunchPlan, binaryPath: string): AgentSdkLaunchOptions {
  const { configuration, conversation } = plan;
  const options: AgentSdkLaunchOptions = {
    cwd: plan.cwd,
    env: plan.environment,
    pathToClaudeCodeExecutable: binaryPath,
    includePartialMessages: true,
    // Without this the SDK sends an empty system prompt, and the model would not see what it sees
    // through the cli transport.
    systemPrompt: {
      type: 'preset',
      preset: 'claude_code',
      ...(configuration.appendSystemPrompt !== undefined ? { append: configuration.appendSystemPrompt } : {}),
    },
  };
  // Decided from stored state, as for the CLI: a new conversation gets our id, a known one is
  // resumed, a copy is a fork of its source under our id.
  if (conversation.kind === 'new') options.sessionId = conversation.providerSessionId;
  else if (conversation.kind === 'resume') options.resume = conversation.providerSessionId;
  else {
    options.resume = conversation.sourceProviderSessionId;
    options.forkSession = true;
    options.sessionId = conversation.providerSessionId;
    if (conversation.afterMessageId !== null) options.resumeSessionAt = conversation.afterMessageId;
  }
  // The SDK's option only sets this variable, which the environment already carries; said here too
  // so the SDK knows rewindFiles() may be used.
  if (plan.environment[fileCheckpointingVariable] === 'true') options.enableFileCheckpointing = true;
  if (configuration.model !== undefined && configuration.model !== 'default') options.model = configuration.model;
  if (configuration.permissionMode !== undefined)
    options.permissionMode = cliPermissionModes[configuration.permissionMode];
  if (configuration.effort !== undefined) options.effort = configuration.effort;
  if (configuration.agent !== undefined) options.agent = configuration.agent;
  if (configuration.settingsPath !== undefined) options.settings = configuration.settingsPath;
  if (plan.ephemeral) options.persistSession = false;
  if (configuration.maxTurns !== undefined) options.maxTurns = configuration.maxTurns;
  if (configuration.maxCostUsd !== undefined) options.maxBudgetUsd = configuration.maxCostUsd;
  if (configuration.mcpConfigPath !== undefined) options.extraArgs = { 'mcp-config': configuration.mcpConfigPath };
  if (configuration.additionalDirectories?.length)
    options.additionalDirectories = [...configuration.additionalDirectories];
  if (configuration.allowedTools?.length) options.allowedTools = [...configuration.allowedTools];
  if (configuration.disallowedTools?.length) options.disallowedTools = [...configuration.disallowedTools];
  return options;
}
