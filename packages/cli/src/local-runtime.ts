import path from 'node:path';
import {
  type ClaudeProviderSettings,
  type ClaudeTransport,
  bindProcessToHost,
  createClaudeProvider,
} from '@tether/provider-claude';
import { type AgentRuntime, type TetherStore, createAgentRuntime } from '@tether/runtime';
import { createGitWorktreeAcquirer } from '@tether/workspace-git';
import { withoutStoreUrl } from './commands/store-option.js';

export interface LocalRuntimeOptions {
  /** The Claude provider's settings (transport, binary, environment, what it denies). */
  readonly claude: ClaudeProviderSettings;
  /** The store (openStore's); none for a command that reads no session. */
  readonly store?: TetherStore | undefined;
  readonly dataDir: string;
  /** The environment git runs with (the command's own, like the agent's). */
  readonly environment: Readonly<Record<string, string | undefined>>;
  /** Where git_worktree sessions get their worktrees (default <dataDir>/worktrees, like `tether serve`). */
  readonly worktreeRoot?: string | undefined;
}

/** The Claude settings a command's in-process options give (--transport, --claude-path, --startup-timeout, --agent-nice). */
export function inProcessClaudeSettings(
  options: {
    readonly transport: ClaudeTransport;
    readonly claudePath: string | undefined;
    readonly startupTimeoutMs: number | undefined;
    readonly agentNice: number | undefined;
  },
  environment: Readonly<Record<string, string | undefined>>,
): ClaudeProviderSettings {
  return {
    transport: options.transport,
    ...(options.claudePath ? { claudePath: options.claudePath } : {}),
    environment,
    ...(options.startupTimeoutMs !== undefined ? { startupTimeoutMs: options.startupTimeoutMs } : {}),
    ...(options.agentNice !== undefined ? { agentNice: options.agentNice } : {}),
  };
}

/**
 * The runtime a command runs in this process when no daemon owns the data dir: Claude, the data
 * dir's store, and git worktree workspaces. The one place the CLI puts a runtime together, so
 * `tether run` and the session commands run without a daemon can all open, restore and release
 * the same worktrees.
 */
export function createLocalRuntime(options: LocalRuntimeOptions): Promise<AgentRuntime> {
  const root = options.worktreeRoot ?? path.join(options.dataDir, 'worktrees');
  const claude = options.claude.environment
    ? { ...options.claude, environment: withoutStoreUrl(options.claude.environment) }
    : options.claude;
  return createAgentRuntime({
    providers: [createClaudeProvider(claude)],
    ...(options.store ? { store: options.store } : {}),
    // On a shared store the sessions whose runtime stopped are the daemons' to take up: a command
    // (or an editor's agent) that took them would hold them, refused to every daemon, while it runs.
    adoptsOrphanedSessions: false,
    workspaces: [
      createGitWorktreeAcquirer({
        root,
        // Its git commands (and their hooks) end with this process however it ends, as its agents do.
        environment: { ...withoutStoreUrl(options.environment), ...bindProcessToHost().environment },
        // The data dir is this command's alone while it runs (its lock), as for a daemon.
        owner: options.dataDir,
      }),
    ],
  });
}
