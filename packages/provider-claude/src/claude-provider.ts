import { randomUUID } from 'node:crypto';
import { type ModelList, toAgentError } from '@tether/protocol';
import type { AgentProviderV1, AgentProviderV1Availability } from '@tether/provider-spec';
import { bundledBinaryVersion } from './binary/bundled-binary-version.js';
import { rememberVersionCheckPassed, versionCheckPassed } from './binary/checked-binaries.js';
import { cliTooOld } from './binary/cli-version-window.js';
import { probeClaudeBinary, readClaudeVersion } from './binary/probe-binary.js';
import { resolveClaudeBinary } from './binary/resolve-binary.js';
import { claudeTransportCapabilities } from './claude-capabilities.js';
import type { ClaudeTransport, ConnectionFactory, LaunchPlan } from './connection/claude-connection.js';
import { CliConnection } from './connection/cli-connection.js';
import { buildClaudeEnvironment } from './launch/build-environment.js';
import { privateTextFolderPrefix } from './launch/system-prompt-file.js';
import { modelListFolderPrefix } from './models/list-models.js';
import { readModelList } from './models/read-model-list.js';
import { RunningAgents } from './models/running-agents.js';
import { sweepAgentsOfEndedHosts } from './process/live-agent-markers.js';
import { reapOrphans } from './process/reap-orphans.js';
import type { AgentSdkQueryFunction } from './sdk/agent-sdk-types.js';
import {
  type AgentSdkLoader,
  claudeAgentSdkPackage,
  importAgentSdk,
  type LoadedAgentSdk,
  loadAgentSdk,
  readInstalledAgentSdkVersion,
} from './sdk/load-agent-sdk.js';
import { AgentPriorities, agentNiceOf } from './process/agent-priority.js';
import { SdkConnection } from './sdk/sdk-connection.js';
import { ClaudeSession } from './session/claude-session.js';
import type { ModelListReads } from './session/claude-session-settings.js';
import { stdoutFolderPrefix } from './process/stdout-channel.js';
import { StdoutChannels } from './process/stdout-channels.js';
import { ProcessPool } from './session/process-pool.js';
import { WarmPool, parkingFolderPrefix } from './session/warm-pool.js';
import { rehearseOutputReading } from './translate/output-rehearsal.js';

export interface ClaudeProviderSettings {
  /**
   * cli (default): Tether drives the claude CLI over its stdio. sdk: through the official Agent SDK's
   * query() (the optional peer dependency @anthropic-ai/claude-agent-sdk), for hosts built on it.
   * Both give the same events; capabilities tell what one of them lacks (docs/providers.md).
   */
  readonly transport?: ClaudeTransport;
  /**
   * sdk transport: the SDK's `query` export (or a deterministic stand-in in tests). Default: loaded
   * from @anthropic-ai/claude-agent-sdk when the first session opens.
   */
  readonly query?: AgentSdkQueryFunction;
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
  /** Bound on reading the model list (the agent started once, for its initialize answer). Default 30 s. */
  readonly modelListTimeoutMs?: number;
  /**
   * stamped (default): frames are attributed to a turn by the uuid stamped on its input, and frames
   * of input Tether did not submit are dropped. legacy-unstamped: for a producer that never stamps
   * (an older CLI or SDK); frames belong to the turn in flight by position, until a stamp is seen.
   */
  readonly correlation?: 'stamped' | 'legacy-unstamped';
  /** bridge (default): every tool prompt becomes an interaction for the host; deny: each is denied with a message. Never a silent allow. */
  readonly approvals?: 'bridge' | 'deny';
  /** bridge (default): AskUserQuestion becomes a question set for the host; deny: the model is told to ask in its reply. */
  readonly questions?: 'bridge' | 'deny';
  /** full (default): approvals carry the tool input for display; none: no tool input enters the durable log. */
  readonly toolInputDetail?: 'full' | 'none';
  /**
   * How much nicer than the host each claude process (and what it starts) runs once the provider has
   * more than one, added to the host's own nice value as `nice -n` does: 0-19 (default 10). On a
   * saturated machine the agents then yield the CPU to their host, so a daemon's events, stops and
   * answers keep flowing while many agents stream; nothing changes while a core is free. A lone
   * agent runs as the host does. 0: always as the host. Linux only
   * (docs/decisions/2026-12-03-agents-yield-the-cpu-to-their-host.md,
   * docs/decisions/2026-12-04-a-lone-agent-runs-as-its-host.md).
   */
  readonly agentNice?: number;
  /** At most this many claude processes at once across the provider's sessions (default 8). */
  readonly maxProcesses?: number;
  /** At the process limit: queue the turn (default, with a run.queued event) or fail it with capacity_exceeded. */
  readonly whenAtProcessLimit?: 'queue' | 'fail';
  /** Stop a session's idle process after this long; the next turn resumes it (default 15 minutes; 0 = never). */
  readonly idleReleaseMs?: number;
  /**
   * Fail (provider_stalled, details.phase 'startup') a run whose newly started claude writes no frame
   * for this long, and kill it; the next turn starts a new one (default 120 s: a slow MCP start fits; 0 = never).
   */
  readonly startupTimeoutMs?: number;
  /** Stop and fail (provider_stalled) a run waiting on the API with no frame for this long (default 10 minutes). */
  readonly stallTimeoutMs?: number;
  /** How long a stalled run's stop may take before its process is killed (default 30 s). */
  readonly stallGraceMs?: number;
  /**
   * How long a stop (interrupt_run) waits for claude's receipt (default 15 s). A claude that does not
   * answer in time no longer reads its input (hung, stopped): it is killed and the run ends interrupted.
   */
  readonly interruptTimeoutMs?: number;
  /**
   * Off by default. Keep this many initialized spare processes per launch configuration and hand one
   * to the next new session, so its first turn costs what a warm turn costs. cli transport: spares
   * wait parked (`--await-claim`) in an empty folder of their own and are claimed for the session's
   * folder, so any folder is served (a configuration's model, settings, tools and environment still
   * have to match; the permission mode travels with the claim); a refused claim starts that session
   * cold, with a `claude.spare_claim_refused.<reason>` diagnostic. sdk transport: spares are started
   * in a session's folder and serve only new sessions there. Spares hold process slots and are the
   * first released when the limit is reached.
   */
  readonly warmPool?: { readonly spares: number };
}

/** What the provider needs besides its settings; tests replace the SDK loader to see "not installed". */
export interface ClaudeProviderSeams {
  readonly loadAgentSdk?: AgentSdkLoader;
}

/** The Claude Code provider: one long-lived agent process per session, over the chosen transport. */
export function createClaudeProvider(settings: ClaudeProviderSettings = {}): AgentProviderV1 {
  return createClaudeProviderWith(settings, {});
}

export function createClaudeProviderWith(
  settings: ClaudeProviderSettings,
  seams: ClaudeProviderSeams,
): AgentProviderV1 {
  const transport = settings.transport ?? 'cli';
  const environment = () => settings.environment ?? process.env;
  const priority = new AgentPriorities(agentNiceOf(settings.agentNice));
  const pool = new ProcessPool({ limit: settings.maxProcesses ?? 8, whenFull: settings.whenAtProcessLimit ?? 'queue' });
  /** Ended by doDispose: the model-list reads this provider started, and their agents. */
  const disposal = new AbortController();
  const modelReads = new Set<Promise<unknown>>();
  // sdk transport: spares are parked through the SDK's prewarm(), which an injected query() comes without.
  const parking = transport === 'cli' || settings.query === undefined;
  const warmPool =
    settings.warmPool && settings.warmPool.spares > 0
      ? new WarmPool({ spares: settings.warmPool.spares, processPool: pool, parking })
      : null;
  // Loaded once; a failure is not kept, so installing the SDK is all a retry needs.
  let sdk: Promise<LoadedAgentSdk> | null = settings.query
    ? Promise.resolve({ query: settings.query, prewarm: undefined })
    : null;
  const agentSdk = (): Promise<LoadedAgentSdk> => {
    sdk ??= loadAgentSdk(seams.loadAgentSdk ?? importAgentSdk).catch((error: unknown) => {
      sdk = null;
      throw error;
    });
    return sdk;
  };
  // Once per binary path: a bundled binary's as the host starts (its version read from its package,
  // without a run), any other beside its first start. A refusal is not kept: updating the CLI is all
  // a retry needs.
  const checkedBinaries = new Map<string, Promise<void>>();
  const beginCheck = (binaryPath: string, shipped: string | undefined): Promise<void> => {
    const asked: ReturnType<typeof readClaudeVersion> =
      shipped === undefined
        ? readClaudeVersion(binaryPath, { environment: environment(), timeoutMs: settings.probeTimeoutMs })
        : Promise.resolve({ version: shipped });
    const check = asked.then((answer) => {
      // A version that cannot be read is not held against the binary: starting it says more.
      const tooOld = 'version' in answer ? cliTooOld(binaryPath, answer.version) : undefined;
      if (!tooOld) {
        if ('version' in answer) rememberVersionCheckPassed(binaryPath, answer.version);
        return;
      }
      checkedBinaries.delete(binaryPath);
      throw tooOld;
    });
    checkedBinaries.set(binaryPath, check);
    return check;
  };
  const checkBinary = (binaryPath: string): Promise<void> => {
    const check = checkedBinaries.get(binaryPath);
    if (check) return check;
    if (versionCheckPassed(binaryPath)) return Promise.resolve();
    return beginCheck(binaryPath, bundledBinaryVersion(binaryPath));
  };
  /**
   * As the host starts, the check of a bundled binary, whose manifests tell its version: reading them
   * beside the first agent's start cost it a few milliseconds of the host's CPU. A binary only a run
   * can tell is left to its first start, and one not found to the first session's error.
   */
  const checkBundledBinaryAhead = (): void => {
    let binaryPath: string;
    try {
      binaryPath = resolveClaudeBinary({ explicitPath: settings.claudePath, environment: environment() }).path;
    } catch {
      return;
    }
    if (checkedBinaries.has(binaryPath) || versionCheckPassed(binaryPath)) return;
    const shipped = bundledBinaryVersion(binaryPath);
    // A refusal is told by the first session's start, which asks again.
    if (shipped !== undefined) beginCheck(binaryPath, shipped).catch(() => undefined);
  };
  // cli transport: each process's stdout is a channel read paced, connected ahead of its start.
  const stdoutChannels = transport === 'cli' ? new StdoutChannels() : null;
  // Connected from the provider's creation, and all of them awaited by the runtime as it starts
  // (doPrepare): the first sessions' opens neither wait for a pair nor share their turns of the event
  // loop with one still connecting.
  void stdoutChannels?.prepare();
  // What a model list is asked of before an agent is started only to read it.
  const runningAgents = new RunningAgents();
  // Every model list read (listModels, a session's model change) ends with the provider, which waits for it.
  const modelListReads: ModelListReads = {
    signal: disposal.signal,
    onRead: (read) => {
      modelReads.add(read);
      read.then(
        () => modelReads.delete(read),
        () => modelReads.delete(read),
      );
    },
  };
  // A read beside the sessions (the model list) is not one of the agents whose number decides their priority.
  const priorityOf = (plan: LaunchPlan) => (plan.background ? {} : { priority });
  const connector = async (binaryPath: string): Promise<ConnectionFactory> => {
    if (stdoutChannels) {
      await stdoutChannels.prepare();
      return runningAgents.tracking(binaryPath, (plan, listener) => {
        const stdoutChannel = stdoutChannels.take();
        return new CliConnection({
          binaryPath,
          plan,
          listener,
          ...priorityOf(plan),
          ...(stdoutChannel ? { stdoutChannel } : {}),
        });
      });
    }
    const { query, prewarm } = await agentSdk();
    return runningAgents.tracking(
      binaryPath,
      (plan, listener) => new SdkConnection({ query, prewarm, binaryPath, plan, listener, ...priorityOf(plan) }),
    );
  };
  return {
    specificationVersion: 'agent-provider-v1',
    name: 'claude',
    capabilities: claudeTransportCapabilities[transport],
    async doProbe(options = {}): Promise<AgentProviderV1Availability> {
      const probed = await probeClaudeBinary({
        explicitPath: settings.claudePath,
        environment: environment(),
        timeoutMs: options.timeoutMs ?? settings.probeTimeoutMs,
      });
      const availability = { ...probed, transport };
      if (transport !== 'sdk' || !availability.available) return availability;
      // An injected query is the host's own: its version is not ours to read.
      const library = {
        name: claudeAgentSdkPackage,
        ...(settings.query ? {} : { version: readInstalledAgentSdkVersion() }),
      };
      try {
        await agentSdk();
        return { ...availability, library };
      } catch (error) {
        return { ...availability, library, available: false, problem: toAgentError(error).toObject() };
      }
    },
    async doRecover(processes) {
      // Records without a start time cannot be verified against pid reuse, and are left alone.
      const verifiable = processes.flatMap((record) =>
        record.startTime === null ? [] : [{ pid: record.pid, startTime: record.startTime, marker: record.marker }],
      );
      if (verifiable.length > 0) await reapOrphans(verifiable);
    },
    async doListModels(): Promise<ModelList> {
      const inherited = environment();
      const binary = resolveClaudeBinary({ explicitPath: settings.claudePath, environment: inherited });
      const { models, agentVersion } = await readModelList({
        transport,
        checkBinary: () => checkBinary(binary.path),
        connector: () => connector(binary.path),
        binaryPath: binary.path,
        // The environment a session's agent gets: the list can depend on the settings it reads.
        environment: buildClaudeEnvironment({
          inherited,
          keepInheritedOAuthToken: settings.keepInheritedOAuthToken ?? false,
          maxRetries: settings.maxRetries,
        }),
        timeoutMs: settings.modelListTimeoutMs ?? 30_000,
        runningAgents,
        ...modelListReads,
      });
      return { provider: 'claude', agentVersion, models };
    },
    async doPrepare() {
      const channels = stdoutChannels?.fill();
      // What a host killed by SIGKILL left, in one look at the temporary folder: what its agents (and
      // their tools) still run (it may have died before it stored them, or mid-sweep), and its folders
      // (a session's private system-prompt append, the spares' parking folder, a stdout pair's, a model list's), which nothing else
      // would ever remove.
      const leftovers = sweepAgentsOfEndedHosts({
        otherPrefixes: [privateTextFolderPrefix, parkingFolderPrefix, stdoutFolderPrefix, modelListFolderPrefix],
      });
      // While the channels connect: the first turn's output then meets code that has run before.
      rehearseOutputReading();
      // Its first call fills the entropy cache the first agent's conversation id is then drawn from.
      randomUUID();
      checkBundledBinaryAhead();
      await Promise.all([channels, leftovers]);
    },
    async doDispose(options = {}) {
      // A model list still being read ends with the host, like every other agent process.
      disposal.abort();
      await Promise.allSettled([...modelReads]);
      await warmPool?.dispose({ force: options.force === true });
      await stdoutChannels?.dispose();
    },
    async doOpenSession(options) {
      const inherited = environment();
      const binary = resolveClaudeBinary({ explicitPath: settings.claudePath, environment: inherited });
      const session = new ClaudeSession(options, {
        transport,
        connect: await connector(binary.path),
        runningAgents,
        modelListReads,
        binaryPath: binary.path,
        checkBinary: () => checkBinary(binary.path),
        correlation: settings.correlation ?? 'stamped',
        inheritedEnvironment: inherited,
        keepInheritedOAuthToken: settings.keepInheritedOAuthToken ?? false,
        maxRetries: settings.maxRetries,
        approvals: settings.approvals ?? 'bridge',
        questions: settings.questions ?? 'bridge',
        toolInputDetail: settings.toolInputDetail ?? 'full',
        pool,
        warmPool,
        idleReleaseMs: settings.idleReleaseMs ?? 15 * 60_000,
        startupTimeoutMs: settings.startupTimeoutMs ?? 120_000,
        stallTimeoutMs: settings.stallTimeoutMs ?? 10 * 60_000,
        stallGraceMs: settings.stallGraceMs ?? 30_000,
        interruptTimeoutMs: settings.interruptTimeoutMs ?? 15_000,
      });
      // A session that starts its conversation now: one that goes on (reopened, a fork) keeps what it has.
      if (options.resumeProviderSessionId === null && !options.copyConversation) session.refuseUnlaunchableMode();
      return session;
    },
  };
}
