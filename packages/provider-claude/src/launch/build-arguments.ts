import type { SessionConfiguration } from '@tether/protocol';
import { cliPermissionModes } from './permission-modes.js';

/** How the process relates to the conversation: decided from stored state, never guessed. */
export type ConversationStart =
  | { readonly kind: 'new'; readonly providerSessionId: string }
  | { readonly kind: 'resume'; readonly providerSessionId: string }
  /**
   * A new conversation `providerSessionId` that starts as a copy of `sourceProviderSessionId`, cut
   * after the transcript entry `afterMessageId` (null: all of it). The source is never changed.
   */
  | {
      readonly kind: 'copy';
      readonly providerSessionId: string;
      readonly sourceProviderSessionId: string;
      readonly afterMessageId: string | null;
    };

/** The flags that start, continue or copy a conversation. */
function conversationArguments(conversation: ConversationStart): string[] {
  switch (conversation.kind) {
    case 'new':
      return ['--session-id', conversation.providerSessionId];
    case 'resume':
      return ['--resume', conversation.providerSessionId];
    case 'copy':
      // --fork-session leaves the source alone: without it --resume-session-at would branch it in place.
      return [
        '--resume',
        conversation.sourceProviderSessionId,
        '--fork-session',
        '--session-id',
        conversation.providerSessionId,
        ...(conversation.afterMessageId === null ? [] : ['--resume-session-at', conversation.afterMessageId]),
      ];
  }
}

export interface ArgumentOptions {
  readonly configuration: SessionConfiguration;
  readonly conversation: ConversationStart;
  readonly ephemeral: boolean;
  /** A warm spare parked before its folder is known, claimed for one later (claim_session). */
  readonly awaitClaim?: boolean;
  /**
   * Where the configuration's appendSystemPrompt was written (launch/system-prompt-file.ts): passed
   * by path, never as text, so no other local user reads it in the process list.
   */
  readonly appendSystemPromptFile?: string;
}

/** The flags Tether owns: nothing in a session's configuration can add or replace these. */
export const protocolArguments = [
  '-p',
  '--input-format',
  'stream-json',
  '--output-format',
  'stream-json',
  '--verbose',
  '--include-partial-messages',
  '--permission-prompt-tool',
  'stdio',
] as const;

/** The claude command line for a session, as a value (tests assert it without spawning). */
export function buildClaudeArguments({
  configuration,
  conversation,
  ephemeral,
  awaitClaim,
  appendSystemPromptFile,
}: ArgumentOptions): string[] {
  const argv: string[] = [...protocolArguments];
  argv.push(...conversationArguments(conversation));
  if (awaitClaim) argv.push('--await-claim');
  if (configuration.model !== undefined && configuration.model !== 'default') argv.push('--model', configuration.model);
  if (configuration.permissionMode !== undefined)
    argv.push('--permission-mode', cliPermissionModes[configuration.permissionMode]);
  if (configuration.effort !== undefined) argv.push('--effort', configuration.effort);
  if (configuration.agent !== undefined) argv.push('--agent', configuration.agent);
  if (configuration.settingsPath !== undefined) argv.push('--settings', configuration.settingsPath);
  if (configuration.appendSystemPrompt !== undefined) {
    if (appendSystemPromptFile === undefined)
      throw new Error('A system-prompt append is passed as a file: write it first (writePrivateTextFile).');
    // A path may start with "-" only if the temporary folder does: joined by "=", never a flag of its own.
    argv.push(`--append-system-prompt-file=${appendSystemPromptFile}`);
  }
  if (ephemeral) argv.push('--no-session-persistence');
  if (configuration.maxTurns !== undefined) argv.push('--max-turns', String(configuration.maxTurns));
  if (configuration.maxCostUsd !== undefined) argv.push('--max-budget-usd', String(configuration.maxCostUsd));
  // Variadic flags take every following value up to the next flag, so each list is closed by
  // the flag after it; values were validated never to start with "-".
  if (configuration.mcpConfigPath !== undefined) argv.push('--mcp-config', configuration.mcpConfigPath);
  if (configuration.additionalDirectories?.length) argv.push('--add-dir', ...configuration.additionalDirectories);
  if (configuration.allowedTools?.length) argv.push('--allowedTools', ...configuration.allowedTools);
  if (configuration.disallowedTools?.length) argv.push('--disallowedTools', ...configuration.disallowedTools);
  return argv;
}
