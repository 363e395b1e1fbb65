import type { AgentProviderV1, AgentProviderV1Capabilities } from '@tether/provider-spec';
import { probeClaudeBinary } from './binary/probe-binary.js';
import { resolveClaudeBinary } from './binary/resolve-binary.js';
import { ClaudeSession } from './session/claude-session.js';

export interface ClaudeProviderSettings {
  /** The claude executable; otherwise TETHER_CLAUDE_PATH, PATH, the usual install locations, the bundled one. */
  readonly claudePath?: string;
  /**
   * The environment the child starts from (default: this process's). Tether applies its
   * protocol floor on top and strips OAuth tokens unless keepInheritedOAuthToken is set.
   */
  readonly environment?: Readonly<Record<string, string | undefined>>;
  /** Keep CLAUDE_CODE_OAUTH_TOKEN(_FILE_DESCRIPTOR) for the child instead of removing them. */
  readonly keepInheritedOAuthToken?: boolean;
  /** Caps the CLI's own API retries (passed as CLAUDE_CODE_MAX_RETRIES); default: the CLI's. */
  readonly maxRetries?: number;
  /** Bound on the availability probe (`claude --version`). Default 10 s. */
  readonly probeTimeoutMs?: number;
  /** bridge (default): every tool prompt becomes an interaction for the host; deny: each is denied with a message. Never a silent allow. */
  readonly approvals?: 'bridge' | 'deny';
  /** bridge (default): AskUserQuestion becomes a question set for the host; deny: the model is told to ask in its reply. */
  readonly questions?: 'bridge' | 'deny';
  /** full (default): approvals carry the tool input for display; none: no tool input enters the durable log. */
  readonly toolInputDetail?: 'full' | 'none';
}

export const claudeCapabilities: AgentProviderV1Capabilities = Object.freeze({
  resume: true,
  interrupt: true,
  approvals: true,
  questions: true,
  controls: true,
  usage: true,
  setModel: true,
  setMode: true,
  fork: false,
  rollback: false,
  inputParts: ['text'] as const,
});

/** The Claude Code provider: one long-lived `claude` process per session, in stream-json mode. */
export function createClaudeProvider(settings: ClaudeProviderSettings = {}): AgentProviderV1 {
  const environment = () => settings.environment ?? process.env;
  return {
    specificationVersion: 'agent-provider-v1',
    name: 'claude',
    capabilities: claudeCapabilities,
    doProbe(options = {}) {
      return probeClaudeBinary({ explicitPath: settings.claudePath, environment: environment(), timeoutMs: options.timeoutMs ?? settings.probeTimeoutMs });
    },
    async doOpenSession(options) {
      const inherited = environment();
      const binary = resolveClaudeBinary({ explicitPath: settings.claudePath, environment: inherited });
      return new ClaudeSession(options, {
        binaryPath: binary.path,
        inheritedEnvironment: inherited,
        keepInheritedOAuthToken: settings.keepInheritedOAuthToken ?? false,
        maxRetries: settings.maxRetries,
        approvals: settings.approvals ?? 'bridge',
        questions: settings.questions ?? 'bridge',
        toolInputDetail: settings.toolInputDetail ?? 'full',
      });
    },
  };
}
