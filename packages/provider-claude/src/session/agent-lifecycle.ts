import { randomUUID } from 'node:crypto';
import {
  AgentError,
  type PermissionMode,
  type SerializedAgentError,
  type SessionConfiguration,
} from '@tether/protocol';
import type { AgentProviderV1Part, AgentProviderV1SessionOptions, AgentProviderV1Turn } from '@tether/provider-spec';
import { spawnFailedError } from '../classify/classify-run-end.js';
import {
  type ClaudeConnection,
  type ConnectionEnding,
  type ConnectionListener,
  whileCurrent,
} from '../connection/claude-connection.js';
import { heldListener } from '../connection/held-listener.js';
import type { CliFrame } from '../frames/cli-frame-schemas.js';
import type { ConversationStart } from '../launch/build-arguments.js';
import { budgetedConfiguration } from '../launch/budget.js';
import { cliPermissionModes } from '../launch/permission-modes.js';
import { attributedRunId } from '../translate/correlation.js';
import { type TranslatorState, createTranslatorState } from '../translate/translator-state.js';
import type { ClaudeSessionSettings } from './claude-session-settings.js';
import { type PendingCopy, conversationStart, launchPlan } from './launch-plan.js';
import { OneShotTimer } from './one-shot-timer.js';
import type { PoolMember } from './process-pool.js';
import { missingWorkspace, sessionClosed } from './session-errors.js';
import { type ClaimRefusal, claimSpare } from './spare-claim.js';
import { claimablePermissionMode, parkedConfiguration, spareKey } from './spare-key.js';
import { StallWatchdog } from './stall-watchdog.js';
import { type AnswerWriter, ToolPrompts } from './tool-prompts.js';
import type { Launcher, Spare } from './warm-pool.js';

/** How far into the turn that took a spare its replacement starts at the latest. */
const spareReplacementDelayMs = 2_000;

/**
 * How long a request that failed on an sdk agent waits for that agent's end, to tell an agent that
 * ended (a refused launch, a crash: the Agent SDK fails the request before the exit is reported; the
 * cli transport reports the exit first) from a request the agent refused.
 */
const refusalReportGraceMs = 2_000;

/** An agent that refused its launch configuration: the configuration it was launched with, and why. */
interface RefusedStart {
  readonly connection: ClaudeConnection;
  readonly configuration: SessionConfiguration;
  readonly error: SerializedAgentError;
}

/** Why the session stopped its agent (reported by session.process_stopped). */
type StopReason = 'idle' | 'closed' | 'released';

/**
 * The agent side of a Claude session: the state it keeps across its agents, how an agent is
 * started (spawned, or a warm spare adopted), told apart from the one it replaced, and stopped,
 * and what the process pool asks of it. What the agent says is handled by AgentOutput, the turns
 * by ClaudeSession.
 */
export abstract class AgentLifecycle implements PoolMember {
  protected readonly options: AgentProviderV1SessionOptions;
  protected readonly settings: ClaudeSessionSettings;
  protected readonly emit: (part: AgentProviderV1Part) => void;
  protected readonly prompts: ToolPrompts;
  protected readonly watchdog: StallWatchdog;
  /**
   * Notices an agent handed a turn that never writes its first frame (a wedged binary, an MCP server
   * that never answers, a login prompt): the stall watchdog only arms once the agent calls the API.
   * Scheduled when a turn is written to an agent that has not spoken yet, cancelled by its first frame.
   */
  protected readonly startupWatchdog: OneShotTimer;
  private currentConnection: ClaudeConnection | null = null;
  /** Told once the current agent is no longer the session's (it ended or was replaced). */
  private connectionChanged: (() => void)[] = [];
  /** The current agent has written a frame (or, a spare, answered initialize): it is past its start-up. */
  protected connectionStarted = false;
  protected state: TranslatorState;
  protected stopped = false;
  protected stopReason: StopReason | null = null;
  protected lastActivity = Date.now();
  protected readonly idleRelease: OneShotTimer;
  /** The conversation the first agent copies; moot once the session's own conversation exists. */
  protected readonly copy: PendingCopy | null;
  /**
   * The CLI has surely written the conversation's transcript: it finished a turn of it (a result),
   * or the session resumed one. It writes behind its frames, so an agent killed before its first
   * result may have left none to resume (agent-output.ts, onEnd).
   */
  protected conversationKept: boolean;
  /** The configuration the next process starts with (mode and model follow live changes). */
  protected configuration: SessionConfiguration;
  /** The permission mode the running agent was launched with. */
  protected launchedMode: PermissionMode | undefined;
  /** The configuration the running (or last) agent was launched with. */
  protected launchedConfiguration: SessionConfiguration;
  /**
   * The last agent that refused its launch (a startup failure, e.g. bypass as root): it is exiting or
   * gone, and takes nothing more. Until the mode or model changes or another agent starts, a request
   * that needs a running agent gets its refusal instead of starting one that would be refused alike.
   */
  protected refusedStart: RefusedStart | null = null;
  protected interrupting: { readonly runId: string; readonly done: Promise<{ applied: boolean }> } | null = null;
  /** A spare refused this session's claim (its folder cannot be claimed): it starts cold from then on. */
  protected spareRefused = false;
  /** Starts the spare that replaces the one this session took, once its first turn is under way (adopt). */
  protected spareReplacement: (() => void) | null = null;
  /** The spare taken as the session's opening was recorded (doOpened), until that take settled. */
  protected openingClaim: Promise<void> | null = null;
  /** The spare the opening waited for stalled: the first turn does not wait for it again. */
  protected spareSkipped = false;
  /** An agent being started while the binary's version check is still out (spawn). */
  protected starting: Promise<ClaudeConnection | null> | null = null;
  /** What the session's runs cost so far (its budget's spent part: a new process gets what is left). */
  protected spentCostUsd: number;
  /**
   * The agent being let go while idle (idle timer, or its slot given to another session's turn) and
   * that stop, until it has ended: it takes nothing more (a turn arriving meanwhile waits for the stop,
   * then starts a new agent that resumes the conversation: send), and what it still says is not heard.
   */
  protected releasing: { readonly connection: ClaudeConnection; readonly done: Promise<void> } | null = null;
  /** The sweep of what the last agent to end left running (a tool's command in a group of its own), until it is done. */
  protected sweeping: Promise<void> | null = null;
  /** The current turn's input, kept until the CLI acknowledges it. */
  protected unacknowledged: {
    readonly turn: AgentProviderV1Turn;
    readonly control: string | undefined;
    retried: boolean;
  } | null = null;

  constructor(options: AgentProviderV1SessionOptions, settings: ClaudeSessionSettings) {
    this.options = options;
    this.settings = settings;
    this.emit = (part) => this.emitPart(part, options.emit);
    this.configuration = options.configuration;
    this.launchedConfiguration = options.configuration;
    this.spentCostUsd = options.spentCostUsd ?? 0;
    this.copy = options.resumeProviderSessionId === null ? (options.copyConversation ?? null) : null;
    this.conversationKept = options.resumeProviderSessionId !== null;
    this.state = createTranslatorState({
      providerSessionId: options.resumeProviderSessionId ?? randomUUID(),
      reportedProviderSessionId: options.resumeProviderSessionId,
      conversationEstablished: options.resumeProviderSessionId !== null,
      correlation: settings.correlation,
      keepsTranscript: !options.ephemeral,
      toolInputDetail: settings.toolInputDetail,
    });
    this.prompts = new ToolPrompts({
      policy: settings,
      emit: (part) => this.emit(part),
      note: (code) => this.note(code),
    });
    this.watchdog = new StallWatchdog({
      timeoutMs: settings.stallTimeoutMs,
      // Only time waiting on the model API counts: not the CLI starting up, a tool running, or the host deciding.
      waitingOnApi: () =>
        this.state.turn?.requesting === true && this.state.turn.toolsRunning === 0 && this.prompts.size === 0,
      onStall: () => this.onStall(),
    });
    this.startupWatchdog = new OneShotTimer({
      delayMs: settings.startupTimeoutMs,
      onFire: () => this.onStartupTimeout(),
    });
    this.idleRelease = new OneShotTimer({
      delayMs: settings.idleReleaseMs,
      onFire: () => {
        // A process with background tasks keeps running: stopping it would kill them.
        if (this.canRelease()) void this.release();
        else if (this.connection && this.state.turn === null) this.scheduleIdleRelease();
      },
    });
    settings.pool.register(this);
    // Spares are started only for a binary that passed the version check (the first turn reports a failed one).
    const key = this.spareKey();
    if (settings.warmPool && key !== null) {
      const warmPool = settings.warmPool;
      void settings.checkBinary().then(
        () => {
          if (!this.stopped) warmPool.prepare(key, this.launcher());
        },
        () => undefined,
      );
    }
  }

  /** The session's agent: running, or ending until its end was handled (onEnd). */
  protected get connection(): ClaudeConnection | null {
    return this.currentConnection;
  }

  protected set connection(next: ClaudeConnection | null) {
    if (next === this.currentConnection) return;
    this.currentConnection = next;
    for (const changed of this.connectionChanged.splice(0)) changed();
  }

  /** Whether `connection` refused its launch: it is exiting (or gone) and takes nothing more. */
  protected refusedItsStart(connection: ClaudeConnection | null): boolean {
    return connection !== null && this.refusedStart?.connection === connection;
  }

  /** Records that `connection` refused its launch configuration. */
  protected refuseStart(connection: ClaudeConnection, error: SerializedAgentError): void {
    this.refusedStart = { connection, configuration: this.launchedConfiguration, error };
  }

  /** The running agent that takes input: none while the one running is being let go or refused its start. */
  protected get liveConnection(): ClaudeConnection | null {
    return this.releasing === null && !this.refusedItsStart(this.connection) ? this.connection : null;
  }

  /**
   * The running agent, or the one starting (launched with the mode and model as they were then:
   * a change made meanwhile is sent to it once it runs); null when none runs or starts (an agent
   * being let go, or one exiting after refusing its start, counts as none: the change applies from the next launch).
   */
  protected async currentAgent(): Promise<ClaudeConnection | null> {
    if (this.releasing || this.refusedItsStart(this.connection)) return null;
    if (this.connection) return this.connection;
    return this.starting ? this.starting.catch(() => null) : null;
  }

  /**
   * Why a request to `connection` failed, when it is because that agent refused its launch (it exits
   * without answering): its refusal, else null. An sdk agent that has not spoken yet may fail a request
   * before its end is reported: its end is waited for, briefly.
   */
  protected async refusalBehind(connection: ClaudeConnection): Promise<SerializedAgentError | null> {
    if (!this.connectionStarted && !this.refusedItsStart(connection)) await this.endReported(connection);
    return this.refusedItsStart(connection) ? this.refusedStart!.error : null;
  }

  /**
   * Once a request to `connection` failed: whether that agent has ended (its end handled). The Agent
   * SDK fails a request before the exit is reported (the cli transport reports the exit first): for
   * an sdk agent still current, its end is waited for, briefly.
   */
  protected async endReported(connection: ClaudeConnection): Promise<boolean> {
    if (connection.transport === 'sdk' && this.connection === connection) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, refusalReportGraceMs);
        timer.unref();
        this.connectionChanged.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.connection !== connection;
  }

  /** Once the agent that refused its start has ended (at once when it has): a new one is started only then. */
  protected async refusedEnded(): Promise<void> {
    const refused = this.refusedStart?.connection;
    // Its end is on its way (the CLI exits right after a refusal); the stop makes sure of it.
    if (refused && this.connection === refused) await refused.stop({ busy: false });
  }

  /** Once an agent being let go has ended (at once when none is): it is never handed anything more. */
  protected async releaseEnded(): Promise<void> {
    while (this.releasing) await this.releasing.done;
  }

  /**
   * The running agent, starting one (resuming the conversation) when none runs or the one running is
   * being let go. While the last agent's refusal of its launch stands (nothing in its configuration
   * changed since), none is started: the refusal is thrown.
   */
  protected async runningConnection(): Promise<ClaudeConnection> {
    await this.releaseEnded();
    if (this.stopped) throw sessionClosed();
    const refused = this.refusedStart;
    if (refused && refused.configuration === this.configuration) throw AgentError.fromObject(refused.error);
    await this.refusedEnded();
    if (this.stopped) throw sessionClosed();
    const connection = this.connection ?? (await this.startConnection(null));
    if (!connection) throw sessionClosed();
    return connection;
  }

  /**
   * Asks something only a running agent answers (starting one when none runs). An agent that cannot
   * start fails it with why (the refusal of its launch, as a turn would), not with the bare end of its process.
   */
  protected async askRunningAgent<T>(ask: (connection: ClaudeConnection) => Promise<T>): Promise<T> {
    const connection = await this.runningConnection();
    try {
      return await ask(connection);
    } catch (error) {
      const refusal = await this.refusalBehind(connection);
      throw refusal ? AgentError.fromObject(refusal) : error;
    } finally {
      this.idleAfterRequest();
    }
  }

  /**
   * An agent started or asked outside a turn is idle once answered: released like any idle agent if
   * no turn comes, and at once if a turn waits for a process slot (else that turn waits for ever).
   */
  protected idleAfterRequest(): void {
    if (!this.connection || this.state.turn) return;
    this.scheduleIdleRelease();
    this.settings.pool.offerIdle();
  }

  /** Answers go to whichever agent is running now; false when none is. */
  protected answerWriter(): AnswerWriter {
    return (requestId, response) => this.connection?.answerPrompt(requestId, response) ?? false;
  }

  // ---- the process pool ------------------------------------------------------------------

  canRelease(): boolean {
    return (
      this.connection !== null &&
      this.state.turn === null &&
      this.prompts.size === 0 &&
      this.state.backgroundTasks === 0
    );
  }

  /**
   * Marked before anything else can run (the pool picks and releases a victim in one step, and a
   * turn sets the session busy in the step it arrives), so a turn either comes first (the process
   * is not idle: no release) or finds the release under way and waits for it (send).
   */
  release(): Promise<void> {
    return this.letGo('idle');
  }

  /**
   * Stops the current agent as one being let go (release): from the call on it takes nothing more, a
   * turn arriving meanwhile waits for its end, and its end ends no run (the session ended its turn itself).
   */
  protected letGo(reason: StopReason, force = false): Promise<void> {
    const connection = this.connection;
    if (!connection) return Promise.resolve();
    // The idle timer's release and the pool's may meet: one stop, one end.
    if (this.releasing?.connection === connection) return this.releasing.done;
    const done = this.stopConnection(reason, force)
      .catch(() => undefined)
      .finally(() => {
        if (this.releasing?.connection === connection) this.releasing = null;
      });
    this.releasing = { connection, done };
    return done;
  }

  lastActiveAt(): number {
    return this.lastActivity;
  }

  // ---- agent lifecycle -------------------------------------------------------------------

  /** The run whose turn last waited for a process slot (its input is looked at again before it is sent). */
  protected queuedRun: string | null = null;
  /** Waits for a process slot under way, by the run they are for (null: the agent is wanted for a control). */
  private readonly slotWaits = new Set<{ readonly runId: string | null; readonly withdraw: AbortController }>();

  /** The run ended while its turn waited for a slot: its place in the queue goes, so nobody waits behind it. */
  protected withdrawSlotWait(runId: string): void {
    for (const wait of this.slotWaits) if (wait.runId === runId) wait.withdraw.abort();
  }

  /** An agent for the session, once the pool grants a slot; null if the session stopped meanwhile. */
  protected async startConnection(runId: string | null): Promise<ClaudeConnection | null> {
    // The spare the opening took comes first: what follows the open waits for that take, not for a spare of its own.
    if (this.openingClaim) {
      await this.openingClaim;
      if (this.connection) return this.connection;
    }
    // Past the opening, a parked spare is claimed together with a turn: a refused claim then starts that turn cold.
    const key = runId !== null || !this.parksSpares() ? this.spareKey() : null;
    const spare =
      this.settings.warmPool && key !== null
        ? await this.settings.warmPool.take(key, { onSkipped: (code) => this.note(code) })
        : undefined;
    if (spare && key !== null) {
      if (!this.stopped && (runId === null || this.state.turn?.runId === runId)) return this.adopt(spare, key);
      await spare.member.release();
    }
    const withdraw = new AbortController();
    const wait = { runId, withdraw };
    this.slotWaits.add(wait);
    let granted: boolean;
    try {
      granted = await this.settings.pool.acquire(
        this,
        (position) => {
          if (runId === null) return;
          this.queuedRun = runId;
          this.emit({ type: 'run.queued', runId, position });
        },
        withdraw.signal,
      );
    } finally {
      this.slotWaits.delete(wait);
    }
    if (!granted) return null;
    if (this.stopped || (runId !== null && this.state.turn?.runId !== runId)) {
      // Granted for a turn that ended meanwhile. A later turn of the session, already waiting on this
      // very grant (the pool counts the session once), starts its agent in it; else the slot goes back.
      if (this.stopped || (this.state.turn === null && !this.connection && this.starting === null))
        this.settings.pool.release(this);
      return null;
    }
    if (this.connection) return this.connection;
    // A second caller while the first start waits for the check shares it (one agent per session).
    this.starting ??= this.spawn().finally(() => {
      this.starting = null;
    });
    return this.starting;
  }

  /** Spares start new conversations: a session that resumes or copies one cannot use them. */
  protected startsNewConversation(): boolean {
    return !this.state.conversationEstablished && this.copy === null;
  }

  /** Spares wait parked in the pool's folder and are claimed for the session's (cli; sdk through prewarm()). */
  protected parksSpares(): boolean {
    return this.settings.warmPool?.parks === true;
  }

  /** The spares this session can take now; null when none can serve it. */
  protected spareKey(): string | null {
    // A spare was launched with the whole budget: a session that spent some of it starts its own.
    if (
      !this.startsNewConversation() ||
      this.spareRefused ||
      this.spareSkipped ||
      (this.spentCostUsd > 0 && this.configuration.maxCostUsd)
    )
      return null;
    return spareKey(this.options, this.settings, this.configuration, this.parksSpares());
  }

  /** `spentCostUsd`: what of the budget is gone for the process (0 for a spare: it serves a new session). */
  protected launch(
    conversation: ConversationStart,
    listener: ConnectionListener,
    spentCostUsd = this.spentCostUsd,
  ): ClaudeConnection {
    const configuration = budgetedConfiguration(this.configuration, spentCostUsd);
    return this.settings.connect(launchPlan(this.options, this.settings, configuration, conversation), listener);
  }

  protected launcher(): Launcher {
    if (!this.parksSpares())
      return ({ providerSessionId }, listener) => this.launch({ kind: 'new', providerSessionId }, listener, 0);
    // Captured now: the spare serves whichever session takes it, not this one's later changes.
    const { options, settings } = this;
    const configuration = parkedConfiguration(this.configuration);
    return ({ providerSessionId, parkingFolder }, listener) =>
      settings.connect(
        {
          ...launchPlan(options, settings, configuration, { kind: 'new', providerSessionId }),
          cwd: parkingFolder ?? options.workspace.path,
          awaitClaim: true,
        },
        listener,
      );
  }

  /**
   * What the session hears from its agent: one listener per connection, ignored once that connection
   * is replaced. Of an agent being let go only the end is heard: it has no turn, and what it might
   * still say must not be taken for that of a turn waiting for the next agent.
   */
  protected listenerFor(connection: () => ClaudeConnection | null): ConnectionListener {
    const current = () => connection() !== null && this.connection === connection();
    const heard = whileCurrent(() => current() && this.releasing?.connection !== connection(), {
      onFrame: (frame) => this.onFrame(frame),
      onNote: (code) => {
        this.onActivity();
        this.note(code);
      },
      onPrompt: (requestId, request) => {
        this.onStarted();
        this.onActivity();
        // A prompt before our turn began belongs to input we did not submit: it is denied.
        this.prompts.onRequest(requestId, request, attributedRunId(this.state), this.answerWriter());
      },
      onPromptWithdrawn: (requestId) => {
        this.onActivity();
        this.prompts.withdraw(requestId);
      },
      onInputFailed: () => this.onInputFailed(connection()),
      onEnd: () => undefined,
    });
    return {
      ...heard,
      onEnd: (ending) => {
        if (current()) this.onEnd(ending);
      },
    };
  }

  /** Per-process memory (cost baseline, open messages) starts again; the conversation and the turn carry over. */
  protected beginConnection(connection: ClaudeConnection, providerSessionId: string, started: boolean): void {
    const previous = this.state;
    this.state = createTranslatorState({
      providerSessionId,
      reportedProviderSessionId: previous.reportedProviderSessionId,
      conversationEstablished: previous.conversationEstablished,
      // Once a producer was seen to stamp, a later process of it stamps too.
      correlation: previous.correlation,
      keepsTranscript: previous.keepsTranscript,
      toolInputDetail: previous.toolInputDetail,
    });
    this.state.turn = previous.turn;
    this.stopReason = null;
    // Another agent started: whether its launch is refused too, its own start tells.
    if (!this.refusedItsStart(connection)) this.refusedStart = null;
    this.connection = connection;
    this.connectionStarted = started;
    const agent = connection.process;
    if (agent)
      this.emit({
        type: 'session.process_started',
        pid: agent.pid,
        startTime: agent.startTime ?? null,
        marker: agent.marker,
      });
  }

  /**
   * Starts an agent while the binary's version check may still be out: the agent becomes the
   * session's (session.process_started, and what it said meanwhile heard) only once the check
   * passed; for a refused binary it is stopped, never reported, and the check's error is thrown.
   */
  protected async spawn(): Promise<ClaudeConnection | null> {
    const missing = missingWorkspace(this.options.workspace.path);
    if (missing) {
      this.settings.pool.release(this);
      throw missing;
    }
    const providerSessionId = this.state.providerSessionId!;
    const conversation = conversationStart(providerSessionId, this.state.conversationEstablished, this.copy);
    let connection: ClaudeConnection | null = null;
    const held = heldListener(this.listenerFor(() => connection));
    // What it is launched with, not what the configuration says once the check below answered: a mode
    // set meanwhile is sent to it live (currentAgent).
    this.launchedMode = this.configuration.permissionMode;
    this.launchedConfiguration = this.configuration;
    try {
      connection = this.launch(conversation, held.listener);
    } catch (error) {
      // spawn() throws synchronously for some failures (E2BIG): the slot goes back, the run fails as a failed start does.
      this.settings.pool.release(this);
      await this.settings.checkBinary();
      throw spawnFailedError(this.settings.binaryPath, (error as NodeJS.ErrnoException).code);
    }
    // After the spawn, not before it: `claude --version` (once per binary and process) is a spawn
    // of its own, and the agent's start-up (~300 ms) need not wait for it. Spares exist only for a
    // binary that passed it.
    const refusal = await this.settings.checkBinary().then(
      () => null,
      (error: unknown) => error,
    );
    if (refusal !== null || this.stopped) {
      await connection.stop({ busy: false, force: true });
      this.settings.pool.release(this);
      if (refusal !== null) throw refusal;
      return null;
    }
    this.beginConnection(connection, providerSessionId, false);
    held.open();
    return connection;
  }

  /**
   * Takes over an initialized spare: its slot, its agent and the conversation id it was started
   * with. A parked one is claimed for the session's folder (and mode); the turn written next
   * travels with the claim.
   */
  protected adopt(spare: Spare, key: string): ClaudeConnection {
    this.settings.pool.transfer(spare.member, this);
    const listener = this.listenerFor(() => spare.connection);
    if (this.parksSpares()) {
      const mode = claimablePermissionMode(this.configuration);
      claimSpare(
        spare,
        { cwd: this.options.workspace.path, permissionMode: mode === undefined ? undefined : cliPermissionModes[mode] },
        listener,
        (refusal) => void this.onClaimRefused(spare.connection, refusal),
      );
    } else spare.adopt(listener);
    // A spare answered initialize: its start-up is behind it. The claim gave it the session's mode.
    this.launchedMode = this.configuration.permissionMode;
    this.launchedConfiguration = this.configuration;
    this.beginConnection(spare.connection, spare.providerSessionId, true);
    // Not now: on a small machine a spare's start-up (a second of CPU) would compete with the very
    // turn the spare is there to speed up. It starts when that turn or process ends, or a while into a long turn.
    const warmPool = this.settings.warmPool;
    const launcher = this.launcher();
    const timer = setTimeout(() => this.replaceSpare(), spareReplacementDelayMs);
    timer.unref();
    this.spareReplacement = () => {
      clearTimeout(timer);
      warmPool?.prepare(key, launcher);
    };
    return spare.connection;
  }

  protected replaceSpare(): void {
    const replace = this.spareReplacement;
    this.spareReplacement = null;
    // A closing session (or a host shutting down) does not start one: the next session's open does.
    if (!this.stopped) replace?.();
  }

  protected async stopConnection(reason: StopReason, force = false): Promise<void> {
    const connection = this.connection;
    if (!connection) return;
    this.stopReason = reason;
    await connection.stop({ busy: this.state.turn !== null, force });
  }

  /**
   * An agent's end is reported at its exit, and what it left is swept right after: a session stopped
   * meanwhile (a shutdown right after a crash or a hung agent's kill) waits for that sweep (doStop).
   */
  protected followSweep(connection: ClaudeConnection): void {
    const sweep: Promise<void> = connection
      .swept()
      .catch(() => undefined)
      .finally(() => {
        if (this.sweeping === sweep) this.sweeping = null;
      });
    this.sweeping = sweep;
  }

  protected scheduleIdleRelease(): void {
    if (this.stopped) this.idleRelease.cancel();
    else this.idleRelease.schedule();
  }

  protected abstract emitPart(part: AgentProviderV1Part, emit: (part: AgentProviderV1Part) => void): void;
  protected abstract note(code: string): void;
  protected abstract onActivity(): void;
  protected abstract onStarted(): void;
  protected abstract onFrame(frame: CliFrame): void;
  protected abstract onInputFailed(connection: ClaudeConnection | null): void;
  protected abstract onEnd(ending: ConnectionEnding): void;
  protected abstract onClaimRefused(connection: ClaudeConnection, refusal: ClaimRefusal): Promise<void>;
  protected abstract onStall(): void;
  protected abstract onStartupTimeout(): void;
}
