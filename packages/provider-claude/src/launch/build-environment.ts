/** Variables that select a subscription login instead of an API key; removed unless the host opts out. */
export const strippedAuthVariables = ['CLAUDE_CODE_OAUTH_TOKEN', 'CLAUDE_CODE_OAUTH_TOKEN_FILE_DESCRIPTOR'] as const;

/** The one switch for the CLI's file checkpoints (no flag or setting turns them on; ../shared/claude-cli-protocol-wave2.md §5). */
export const fileCheckpointingVariable = 'CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING';

/**
 * The variables that tie git to one repository: what git itself clears before it works in another one,
 * a submodule (`git rev-parse --local-env-vars`). A host started from a git hook or inside a checkout
 * inherits some (GIT_DIR, GIT_WORK_TREE, GIT_INDEX_FILE), and with them the agent's git would read and
 * commit to that repository instead of the session's folder (its worktree). Dropped from what is
 * inherited (with the GIT_CONFIG_KEY_n / GIT_CONFIG_VALUE_n pairs GIT_CONFIG_COUNT counts); a session's
 * own environment may still set them. Unlike Tether's own git calls (workspace-git's run-git.ts, which
 * keep no GIT_* but where git finds its configuration), the agent's git is the user's: their identity,
 * SSH command and editor variables pass on.
 */
export const repositoryGitVariables = [
  'GIT_ALTERNATE_OBJECT_DIRECTORIES',
  'GIT_CONFIG',
  'GIT_CONFIG_PARAMETERS',
  'GIT_CONFIG_COUNT',
  'GIT_OBJECT_DIRECTORY',
  'GIT_DIR',
  'GIT_WORK_TREE',
  'GIT_IMPLICIT_WORK_TREE',
  'GIT_GRAFT_FILE',
  'GIT_INDEX_FILE',
  'GIT_NO_REPLACE_OBJECTS',
  'GIT_REPLACE_REF_BASE',
  'GIT_PREFIX',
  'GIT_INTERNAL_SUPER_PREFIX',
  'GIT_SHALLOW_FILE',
  'GIT_COMMON_DIR',
] as const;

export interface EnvironmentOptions {
  /** What the host process would pass on: usually process.env. */
  readonly inherited: Readonly<Record<string, string | undefined>>;
  /** The session's typed `environment` configuration. */
  readonly session?: Readonly<Record<string, string>> | undefined;
  /** Keep an inherited OAuth token (off by default: see the README). */
  readonly keepInheritedOAuthToken?: boolean;
  /** Caps the CLI's own API retries (CLAUDE_CODE_MAX_RETRIES). */
  readonly maxRetries?: number | undefined;
  /** Keep file checkpoints for rewind (the session's fileCheckpointing; on unless false). */
  readonly fileCheckpointing?: boolean | undefined;
}

/**
 * The child's environment, in layers: what the host inherits (without the variables that tie git to
 * one repository) with the protocol floor applied (TERM=dumb, CI=true, no CLAUDECODE), then the
 * session's own variables, then the auth strip.
 * A removed variable is absent in the child, not empty.
 */
export function buildClaudeEnvironment(options: EnvironmentOptions): Record<string, string> {
  const environment: Record<string, string> = {};
  for (const [name, value] of Object.entries(options.inherited)) {
    if (value !== undefined) environment[name] = value;
  }
  for (const name of repositoryGitVariables) delete environment[name];
  for (const name of Object.keys(environment))
    if (/^GIT_CONFIG_(?:KEY|VALUE)_\d+$/.test(name)) delete environment[name];
  environment.TERM = 'dumb';
  environment.CI = 'true';
  // Startup failures (e.g. bypass mode refused as root) then end with a structured result
  // carrying startup_failure_reason instead of stderr text alone.
  environment.CLAUDE_CODE_STARTUP_FAILURE_RESULTS = '1';
  if (options.maxRetries !== undefined) environment.CLAUDE_CODE_MAX_RETRIES = String(options.maxRetries);
  for (const [name, value] of Object.entries(options.session ?? {})) environment[name] = value;
  // The typed setting decides, whatever was inherited or set as a variable: the session reports rewinds by it.
  if (options.fileCheckpointing === false) delete environment[fileCheckpointingVariable];
  else environment[fileCheckpointingVariable] = 'true';
  // A CLAUDECODE inherited from a surrounding Claude Code session would make the child think it is nested.
  delete environment.CLAUDECODE;
  if (!options.keepInheritedOAuthToken) {
    for (const name of strippedAuthVariables) delete environment[name];
  }
  return environment;
}
