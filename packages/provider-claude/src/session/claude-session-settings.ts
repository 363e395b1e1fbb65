import type { ClaudeTransport, ConnectionFactory } from '../connection/claude-connection.js';
import type { AgentModels } from '../models/list-models.js';
import type { RunningAgents } from '../models/running-agents.js';
import type { Correlation } from '../translate/correlation.js';
import type { ProcessPool } from './process-pool.js';
import type { ToolPromptPolicy } from './tool-prompts.js';
import type { WarmPool } from './warm-pool.js';

/** What a Claude session is given by its provider: the transport, the process limits, the prompt policy. */
export interface ClaudeSessionSettings extends ToolPromptPolicy {
  /** Which transport carries the session (spares are only shared within one). */
  readonly transport: ClaudeTransport;
  /** Starts the agent for a launch plan over the session's transport. */
  readonly connect: ConnectionFactory;
  /** The provider's session agents, which a model list is asked of before one is started to read it. */
  readonly runningAgents?: RunningAgents;
  /**
   * The provider's hold on the model lists it reads (its disposal ends them, and waits for them): a
   * list is shared by whoever asks for it meanwhile, so its read is not the session's to end.
   */
  readonly modelListReads?: ModelListReads;
  /** The claude executable (named when it cannot be started). */
  readonly binaryPath: string;
  /** Rejects (provider_unavailable, cli_too_old) when the binary is older than supported; awaited before every start, cached by the provider. */
  readonly checkBinary: () => Promise<void>;
  /** How frames are attributed to turns (see translate/correlation.ts). */
  readonly correlation: Correlation;
  readonly inheritedEnvironment: Readonly<Record<string, string | undefined>>;
  readonly keepInheritedOAuthToken: boolean;
  readonly maxRetries: number | undefined;
  /** Shared by the provider's sessions: at most N processes at once. */
  readonly pool: ProcessPool;
  /** Initialized spare processes for new sessions, when the host turned them on. */
  readonly warmPool: WarmPool | null;
  /** An idle process is stopped after this long (the next turn resumes); 0 keeps it. */
  readonly idleReleaseMs: number;
  /** A run whose newly started agent writes no frame for this long is failed provider_stalled (phase startup) and the agent killed. */
  readonly startupTimeoutMs: number;
  /** A run waiting on the API with no frame for this long is stopped and failed provider_stalled. */
  readonly stallTimeoutMs: number;
  /** How long a stalled run's stop may take before its process is killed. */
  readonly stallGraceMs: number;
  /** How long a stop waits for the agent's receipt before the agent counts as hung and is killed. */
  readonly interruptTimeoutMs: number;
}

/** What ends a model list's read (the provider's disposal), and hears of each read that starts an agent. */
export interface ModelListReads {
  readonly signal: AbortSignal;
  readonly onRead: (read: Promise<AgentModels>) => void;
}
