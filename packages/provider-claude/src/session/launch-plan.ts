import type { SessionConfiguration } from '@tether/protocol';
import type { AgentProviderV1SessionOptions } from '@tether/provider-spec';
import type { LaunchPlan } from '../connection/claude-connection.js';
import type { ConversationStart } from '../launch/build-arguments.js';
import { buildClaudeEnvironment } from '../launch/build-environment.js';
import type { ClaudeSessionSettings } from './claude-session-settings.js';

/** The conversation a session's agents start from (copyConversation), until the copy exists. */
export type PendingCopy = NonNullable<AgentProviderV1SessionOptions['copyConversation']>;

/**
 * How the next agent relates to the conversation: an established one is resumed; before that, a
 * pending copy is made under the session's new id, or a new conversation is started under it.
 */
export function conversationStart(
  providerSessionId: string,
  conversationEstablished: boolean,
  copy: PendingCopy | null,
): ConversationStart {
  if (conversationEstablished) return { kind: 'resume', providerSessionId };
  if (copy)
    return {
      kind: 'copy',
      providerSessionId,
      sourceProviderSessionId: copy.providerSessionId,
      afterMessageId: copy.afterMessageId,
    };
  return { kind: 'new', providerSessionId };
}

/** The whole environment an agent of the session starts with in `configuration`. */
export function launchEnvironment(
  settings: ClaudeSessionSettings,
  configuration: SessionConfiguration,
): Record<string, string> {
  return buildClaudeEnvironment({
    inherited: settings.inheritedEnvironment,
    session: configuration.environment,
    keepInheritedOAuthToken: settings.keepInheritedOAuthToken,
    maxRetries: settings.maxRetries,
    fileCheckpointing: configuration.fileCheckpointing,
  });
}

/** Everything a transport needs to start an agent for the session in its current configuration. */
export function launchPlan(
  options: AgentProviderV1SessionOptions,
  settings: ClaudeSessionSettings,
  configuration: SessionConfiguration,
  conversation: ConversationStart,
): LaunchPlan {
  return {
    configuration,
    conversation,
    ephemeral: options.ephemeral,
    cwd: options.workspace.path,
    environment: launchEnvironment(settings, configuration),
  };
}
