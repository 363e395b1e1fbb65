import { randomUUID } from 'node:crypto';
import {
  AgentError,
  type ContextUsage,
  type InteractionAnswer,
  type PermissionMode,
  type SerializedAgentError,
  type SessionConfiguration,
} from '@tether/protocol';
import type {
  AgentProviderV1Control,
  AgentProviderV1Part,
  AgentProviderV1Session,
  AgentProviderV1SessionOptions,
  AgentProviderV1StopOptions,
  AgentProviderV1StopReason,
  AgentProviderV1Turn,
} from '@tether/provider-spec';
import { classifyRunEnd, spawnFailedError } from '../classify/classify-run-end.js';
import {
  type ClaudeConnection,
  type ConnectionEnding,
  type ConnectionListener,
  processExitOf,
  userMessage,
  whileCurrent,
} from '../connection/claude-connection.js';
import { toRunEnding } from '../connection/connection-ending.js';
import type { CliFrame } from '../frames/cli-frame-schemas.js';
import { buildClaudeEnvironment } from '../launch/build-environment.js';
import { attributedRunId, revealsUnstampedProducer } from '../translate/correlation.js';
import { translateFrame } from '../translate/translate-frame.js';
import { type ActiveTurn, type TranslatorState, createTranslatorState } from '../translate/translator-state.js';
import { acknowledgesInput } from './acknowledgement.js';
import type { ClaudeSessionSettings } from './claude-session-settings.js';
import {
  requestContextUsage,
  requestModel,
  requestPermissionMode,
  requestSessionCost,
  requiresRestart,
} from './control-requests.js';
import { requestInterrupt } from './interrupt-request.js';
import type { PoolMember } from './process-pool.js';
import { OneShotTimer } from './one-shot-timer.js';
import { closingMessage, inputClosedError, sessionClosed, stalledError, unstampedError } from './session-errors.js';
import { StallWatchdog } from './stall-watchdog.js';
import { type AnswerWriter, ToolPrompts } from './tool-prompts.js';
import type { Launcher, Spare } from './warm-pool.js';

type StopReason = 'idle' | 'closed' | 'released';

/** How long an agent whose input failed may take to exit on its own before it counts as no longer reading. */
const inputClosedGraceMs = 1_000;

/**
 * One Claude conversation. Its agent (a connection over the session's transport) starts with the
 * first turn (the user line is written at spawn, without waiting for initialize) and can end without
 * the conversation ending — a crash, an idle release, a runtime shutdown — after which the next turn
 * starts a new one with --resume.
 */
export class ClaudeSession implements AgentProviderV1Session, PoolMember {
  private readonly options: AgentProviderV1SessionOptions;
  private readonly settings: ClaudeSessionSettings;
  private readonly emit: (part: AgentProviderV1Part) => void;
  private readonly prompts: ToolPrompts;
  private readonly watchdog: StallWatchdog;
  /**
   * Notices an agent handed a turn that never writes its first frame (a wedged binary, an MCP server
   * that never answers, a login prompt): the stall watchdog only arms once the agent calls the API.
   * Scheduled when a turn is written to an agent that has not spoken yet, cancelled by its first frame.
   */
  private readonly startupWatchdog: OneShotTimer;
  private connection: ClaudeConnection | null = null;
  /** The current agent has written a frame (or, a spare, answered initialize): it is past its start-up. */
  private connectionStarted = false;
  private state: TranslatorState;
  private stopped = false;
  private stopReason: StopReason | null = null;
  private lastActivity = Date.now();
  private readonly idleRelease: OneShotTimer;
  /** The configuration the next process starts with (mode and model follow live changes). */
  private configuration: SessionConfiguration;
  /** The permission mode the running agent was launched with. */
  private launchedMode: PermissionMode | undefined;
  private interrupting: { readonly runId: string; readonly done: Promise<{ applied: boolean }> } | null = null;
  /** The current turn's input, kept until the CLI acknowledges it. */
  private unacknowledged: {
    readonly turn: AgentProviderV1Turn;
    readonly control: string | undefined;
    retried: boolean;
  } | null = null;

  constructor(options: AgentProviderV1SessionOptions, settings: ClaudeSessionSettings) {
    this.options = options;
    this.settings = settings;
    this.emit = options.emit;
    this.configuration = options.configuration;
    this.state = createTranslatorState({
      providerSessionId: options.resumeProviderSessionId ?? randomUUID(),
      reportedProviderSessionId: options.resumeProviderSessionId,
      conversationEstablished: options.resumeProviderSessionId !== null,
      correlation: settings.correlation,
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
    if (settings.warmPool && !this.state.conversationEstablished) {
      const warmPool = settings.warmPool;
      void settings.checkBinary().then(
        () => {
          if (!this.stopped) warmPool.prepare(this.launchKey(), this.launcher());
        },
        () => undefined,
      );
    }
  }

  // ---- turns and controls ----------------------------------------------------------------

  async doTurn(turn: AgentProviderV1Turn, control?: string): Promise<void> {
    if (this.stopped) throw sessionClosed();
    if (this.state.turn)
      throw new AgentError({ code: 'run_active', message: 'The claude CLI is still working on the previous turn.' });
    this.unacknowledged = { turn, control, retried: false };
    await this.send(turn, control);
  }

  async doControl(control: AgentProviderV1Control): Promise<void> {
    // Slash commands are user lines the CLI recognises; the turn is marked so its result completes the control.
    const text = `/${control.name}${control.argument === undefined ? '' : ` ${control.argument}`}`;
    await this.doTurn({ runId: control.runId, input: [{ type: 'text', text }] }, control.name);
  }

  private async send(turn: AgentProviderV1Turn, control?: string): Promise<void> {
    const uuid = randomUUID();
    const active: ActiveTurn = {
      runId: turn.runId,
      uuid,
      started: false,
      toolsRunning: 0,
      interruptRequested: this.state.turn?.runId === turn.runId && this.state.turn.interruptRequested,
      ...(control !== undefined ? { control } : {}),
    };
    this.state.turn = active;
    this.idleRelease.cancel();
    let connection: ClaudeConnection | null;
    try {
      connection = this.connection ?? (await this.startConnection(turn.runId));
    } catch (error) {
      // Nothing was started (e.g. the binary is too old): the turn is not in flight; its run fails with the error.
      if (this.state.turn === active) {
        this.state.turn = null;
        this.unacknowledged = null;
      }
      throw error;
    }
    // Stopped while waiting for a process slot: nothing to send.
    if (!connection || this.state.turn !== active) return;
    this.lastActivity = Date.now();
    this.watchdog.touch();
    if (!this.connectionStarted) this.startupWatchdog.schedule();
    // A failed write means the agent is gone (its end handler retries or completes the run) or no
    // longer reads its input (onInputFailed).
    if (!connection.send(userMessage(turn.input, uuid)) && connection.running) this.onInputFailed(connection);
  }

  // ---- stop, interrupt, answers, modes, queries -------------------------------------------

  async doStop(reason: AgentProviderV1StopReason, options: AgentProviderV1StopOptions = {}): Promise<void> {
    this.stopped = true;
    this.idleRelease.cancel();
    this.watchdog.stop();
    this.startupWatchdog.cancel();
    // Nothing is left waiting and nothing is allowed on the way out.
    this.prompts.denyAll(this.answerWriter(), closingMessage);
    await this.stopConnection(reason === 'close' ? 'closed' : 'released', options.force === true);
    this.settings.pool.unregister(this);
  }

  doInterrupt({ runId }: { runId: string }): Promise<{ applied: boolean }> {
    const turn = this.state.turn;
    if (!turn || turn.runId !== runId) return Promise.resolve({ applied: false });
    if (this.interrupting?.runId === runId) return this.interrupting.done;
    // Provisional until the receipt: a result arriving first is held until then (onFrame), and a
    // stop that fails or is refused leaves the run the outcome its own result gives.
    turn.interruptRequested = true;
    if (!this.connection) {
      // Waiting for a process slot (or none started): the run ends here, nothing reached the CLI.
      this.endTurn(turn, { outcome: 'interrupted' });
      return Promise.resolve({ applied: true });
    }
    const firstTurnOfProcess = !this.state.turnStartedOnProcess;
    const done = requestInterrupt(
      this.connection,
      turn,
      () => {
        if (this.state.turn === turn) this.endTurn(turn, { outcome: 'interrupted' });
      },
      { firstTurnOfProcess },
    )
      .catch((error: unknown) => {
        turn.interruptRequested = false;
        if (AgentError.isInstance(error) && error.details?.reason === 'input_still_queued')
          this.note('claude.interrupt_input_still_queued');
        throw error;
      })
      .finally(() => {
        if (this.interrupting?.done === done) this.interrupting = null;
      });
    this.interrupting = { runId, done };
    return done;
  }

  async doRespond({ interactionRef, answer }: { interactionRef: string; answer: InteractionAnswer }): Promise<void> {
    // Awaited only when delivery is known once written: the agent's next output must not overtake the answer's record.
    const delivery = this.prompts.respond(interactionRef, answer, this.answerWriter());
    if (delivery) await delivery;
    this.watchdog.touch();
  }

  requiresRestartFor(mode: PermissionMode): boolean {
    // The CLI refuses to enter bypass mode live unless it was launched in it.
    return this.connection !== null && mode === 'bypass' && this.launchedMode !== 'bypass';
  }

  async doSetPermissionMode(mode: PermissionMode): Promise<PermissionMode> {
    if (this.requiresRestartFor(mode)) throw requiresRestart(mode);
    this.configuration = { ...this.configuration, permissionMode: mode };
    return this.connection ? requestPermissionMode(this.connection, mode) : mode;
  }

  async doSetModel(model: string): Promise<string> {
    this.configuration = { ...this.configuration, model };
    return this.connection ? requestModel(this.connection, model) : model;
  }

  async doGetContextUsage(): Promise<ContextUsage> {
    return requestContextUsage(await this.runningConnection());
  }

  async doGetSessionCost(): Promise<{ report: string }> {
    return requestSessionCost(await this.runningConnection());
  }

  /** The running agent, starting one (resuming the conversation) when none runs. */
  private async runningConnection(): Promise<ClaudeConnection> {
    if (this.stopped) throw sessionClosed();
    const connection = this.connection ?? (await this.startConnection(null));
    if (!connection) throw sessionClosed();
    return connection;
  }

  /** Answers go to whichever agent is running now; false when none is. */
  private answerWriter(): AnswerWriter {
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

  release(): Promise<void> {
    return this.stopConnection('idle');
  }

  lastActiveAt(): number {
    return this.lastActivity;
  }

  // ---- agent lifecycle -------------------------------------------------------------------

  /** An agent for the session, once the pool grants a slot; null if the session stopped meanwhile. */
  private async startConnection(runId: string | null): Promise<ClaudeConnection | null> {
    await this.settings.checkBinary();
    const spare =
      this.settings.warmPool && !this.state.conversationEstablished
        ? await this.settings.warmPool.take(this.launchKey())
        : undefined;
    if (spare) {
      if (!this.stopped && (runId === null || this.state.turn?.runId === runId)) return this.adopt(spare);
      await spare.member.release();
    }
    await this.settings.pool.acquire(this, (position) => {
      if (runId !== null) this.emit({ type: 'run.queued', runId, position });
    });
    if (this.stopped || (runId !== null && this.state.turn?.runId !== runId)) {
      this.settings.pool.release(this);
      return null;
    }
    if (this.connection) return this.connection;
    try {
      return this.spawn();
    } catch (error) {
      // spawn() throws synchronously for some failures (E2BIG): the slot goes back, the run fails as a failed start does.
      this.settings.pool.release(this);
      throw spawnFailedError(this.settings.binaryPath, (error as NodeJS.ErrnoException).code);
    }
  }

  /** Spares are interchangeable only between sessions that would launch the agent the same way. */
  private launchKey(): string {
    return JSON.stringify([
      this.settings.transport,
      this.settings.binaryPath,
      this.options.workspace.path,
      this.options.ephemeral,
      this.configuration,
    ]);
  }

  private launch(
    conversation: { kind: 'new' | 'resume'; providerSessionId: string },
    listener: ConnectionListener,
  ): ClaudeConnection {
    return this.settings.connect(
      {
        configuration: this.configuration,
        conversation,
        ephemeral: this.options.ephemeral,
        cwd: this.options.workspace.path,
        environment: buildClaudeEnvironment({
          inherited: this.settings.inheritedEnvironment,
          session: this.configuration.environment,
          keepInheritedOAuthToken: this.settings.keepInheritedOAuthToken,
          maxRetries: this.settings.maxRetries,
        }),
      },
      listener,
    );
  }

  private launcher(): Launcher {
    return (providerSessionId, listener) => this.launch({ kind: 'new', providerSessionId }, listener);
  }

  /** What the session hears from its agent: one listener per connection, ignored once that connection is replaced. */
  private listenerFor(connection: () => ClaudeConnection | null): ConnectionListener {
    return whileCurrent(() => connection() !== null && this.connection === connection(), {
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
      onEnd: (ending) => this.onEnd(ending),
    });
  }

  /** Per-process memory (cost baseline, open messages) starts again; the conversation and the turn carry over. */
  private beginConnection(connection: ClaudeConnection, providerSessionId: string, started: boolean): void {
    const previous = this.state;
    this.state = createTranslatorState({
      providerSessionId,
      reportedProviderSessionId: previous.reportedProviderSessionId,
      conversationEstablished: previous.conversationEstablished,
      // Once a producer was seen to stamp, a later process of it stamps too.
      correlation: previous.correlation,
    });
    this.state.turn = previous.turn;
    this.stopReason = null;
    this.connection = connection;
    this.connectionStarted = started;
    this.launchedMode = this.configuration.permissionMode;
    const agent = connection.process;
    if (agent)
      this.emit({
        type: 'session.process_started',
        pid: agent.pid,
        startTime: agent.startTime ?? null,
        marker: agent.marker,
      });
  }

  private spawn(): ClaudeConnection {
    const providerSessionId = this.state.providerSessionId!;
    const conversation = {
      kind: this.state.conversationEstablished ? ('resume' as const) : ('new' as const),
      providerSessionId,
    };
    let connection: ClaudeConnection | null = null;
    connection = this.launch(
      conversation,
      this.listenerFor(() => connection),
    );
    this.beginConnection(connection, providerSessionId, false);
    return connection;
  }

  /** Takes over an initialized spare: its slot, its agent and the conversation id it was started with. */
  private adopt(spare: Spare): ClaudeConnection {
    this.settings.pool.transfer(spare.member, this);
    spare.adopt(this.listenerFor(() => spare.connection));
    // A spare answered initialize: its start-up is behind it.
    this.beginConnection(spare.connection, spare.providerSessionId, true);
    this.settings.warmPool?.prepare(this.launchKey(), this.launcher());
    return spare.connection;
  }

  private async stopConnection(reason: StopReason, force = false): Promise<void> {
    const connection = this.connection;
    if (!connection) return;
    this.stopReason = reason;
    await connection.stop({ busy: this.state.turn !== null, force });
  }

  private scheduleIdleRelease(): void {
    if (this.stopped) this.idleRelease.cancel();
    else this.idleRelease.schedule();
  }

  // ---- output ----------------------------------------------------------------------------

  private note(code: string): void {
    if (this.state.notedDiagnostics.has(code)) return;
    this.state.notedDiagnostics.add(code);
    this.emit({
      type: 'diagnostic',
      level: 'warning',
      code,
      ...(this.state.turn ? { runId: this.state.turn.runId } : {}),
    });
  }

  private onActivity(): void {
    this.lastActivity = Date.now();
    if (this.state.turn) this.watchdog.touch();
  }

  private onStarted(): void {
    this.connectionStarted = true;
    this.startupWatchdog.cancel();
  }

  private onFrame(frame: CliFrame): void {
    this.onStarted();
    this.onActivity();
    if (this.state.turn && !this.state.turn.failure && revealsUnstampedProducer(this.state, frame))
      this.onUnstampedProducer(this.state.turn);
    if (this.unacknowledged && this.state.turn && acknowledgesInput(frame, this.state.turn.uuid))
      this.unacknowledged = null;
    const turn = this.state.turn;
    const pendingStop = turn && this.interrupting?.runId === turn.runId ? this.interrupting.done : null;
    // A result that overtakes the stop's receipt is classified on its own; the receipt decides below.
    if (turn && pendingStop && frame.kind === 'result') turn.interruptRequested = false;
    const parts = translateFrame(this.state, frame);
    if (turn && pendingStop && this.state.turn === turn) turn.interruptRequested = true;
    const failure = turn?.failure;
    if (turn && failure) {
      // A run we are stopping ends failed whatever the CLI reports for it.
      for (const part of parts)
        this.emit(
          part.type === 'run.completed' && part.runId === turn.runId
            ? { type: 'run.completed', runId: turn.runId, outcome: 'failed', error: failure }
            : part,
        );
    } else if (turn && pendingStop) {
      const ending = parts.filter(
        (part) => (part.type === 'run.completed' || part.type === 'control.completed') && part.runId === turn.runId,
      );
      for (const part of parts) if (!ending.includes(part)) this.emit(part);
      if (ending.length > 0) void this.afterReceipt(pendingStop, ending);
    } else {
      for (const part of parts) this.emit(part);
    }
    if (turn && this.state.turn === null) this.afterTurn(turn);
    // Between turns (e.g. the last background task ended): the process may have just become releasable.
    else if (this.state.turn === null) this.settings.pool.offerIdle();
  }

  /** A run's ending held for its stop's receipt: interrupted if the stop was applied, its own outcome otherwise. */
  private async afterReceipt(receipt: Promise<{ applied: boolean }>, ending: AgentProviderV1Part[]): Promise<void> {
    const applied = await receipt.then(
      (answer) => answer.applied,
      () => false,
    );
    // Nothing is emitted once the session has stopped (the runtime ends the run itself).
    if (this.stopped) return;
    for (const part of ending) {
      if (!applied) this.emit(part);
      else if (part.type === 'run.completed')
        this.emit({ type: 'run.completed', runId: part.runId, outcome: 'interrupted' });
      else if (part.type === 'control.completed') this.emit({ ...part, status: 'failed' });
    }
  }

  /** Ends the current turn from outside the CLI's own result (interrupted before it started, stalled, crashed). */
  private endTurn(
    turn: ActiveTurn,
    classification: { outcome: 'succeeded' | 'failed' | 'interrupted'; error?: SerializedAgentError | undefined },
  ): void {
    if (this.state.turn !== turn) return;
    this.state.turn = null;
    this.unacknowledged = null;
    this.emit({
      type: 'run.completed',
      runId: turn.runId,
      outcome: classification.outcome,
      ...(classification.error ? { error: classification.error } : {}),
    });
    this.afterTurn(turn);
  }

  private afterTurn(turn: ActiveTurn): void {
    this.prompts.forgetRun(turn.runId, this.answerWriter());
    this.watchdog.stop();
    this.startupWatchdog.cancel();
    if (this.connection) this.scheduleIdleRelease();
    // A session waiting for a process need not wait for the idle timer: this one may be let go now.
    this.settings.pool.offerIdle();
  }

  private onStall(): void {
    const turn = this.state.turn;
    if (!turn || turn.failure) return;
    const failure = stalledError('api', this.settings.stallTimeoutMs);
    turn.failure = failure;
    this.note('claude.stall_detected');
    const connection = this.connection;
    if (connection)
      void requestInterrupt(connection, turn, () => this.endTurn(turn, { outcome: 'failed', error: failure }), {
        firstTurnOfProcess: !this.state.turnStartedOnProcess,
      }).catch(() => undefined);
    // If the stop does not settle in time, the agent goes; its end fails the run.
    const grace = setTimeout(() => {
      if (this.state.turn === turn) void this.stopConnection('released');
    }, this.settings.stallGraceMs);
    grace.unref();
  }

  /** The agent was handed a turn and wrote nothing: it is killed, the run fails, the next turn starts a new one. */
  private onStartupTimeout(): void {
    const turn = this.state.turn;
    if (!turn || turn.failure || !this.connection || this.connectionStarted) return;
    turn.failure = stalledError('startup', this.settings.startupTimeoutMs);
    this.note('claude.startup_timeout');
    // The process's end fails the run (onEnd), so no later turn can be written to it meanwhile.
    void this.stopConnection('released');
  }

  /** Reported once per process; the process goes, since a turn nobody can follow would run on unobserved. */
  private onUnstampedProducer(turn: ActiveTurn): void {
    turn.failure = unstampedError();
    this.note('claude.frames_unstamped');
    void this.stopConnection('released');
  }

  /**
   * A write to the agent failed. An agent that is exiting fails writes too, and its end decides the
   * run (a turn it never saw is sent again); one still running a moment later no longer reads its
   * input: nothing can reach it again, neither a turn, an answer nor a stop, so it goes and its end
   * fails the run.
   */
  private onInputFailed(connection: ClaudeConnection | null): void {
    const timer = setTimeout(() => {
      if (connection === null || this.connection !== connection || !connection.running) return;
      const turn = this.state.turn;
      if (turn && !turn.failure) turn.failure = inputClosedError();
      this.note('claude.stdin_closed');
      void this.stopConnection('released');
    }, inputClosedGraceMs);
    timer.unref();
  }

  private onEnd(ending: ConnectionEnding): void {
    this.connection = null;
    this.startupWatchdog.cancel();
    this.settings.pool.release(this);
    this.idleRelease.cancel();
    this.prompts.clear();
    const exit = processExitOf(ending);
    if (exit) {
      const ended = exit.signal !== null || (exit.exitCode !== null && exit.exitCode !== 0) ? 'crashed' : 'exited';
      this.emit({ type: 'session.process_stopped', reason: this.stopReason ?? ended });
    }
    if (!this.state.conversationEstablished && this.state.providerSessionId && !this.options.ephemeral) {
      // Nothing was recorded under this id; a fresh one avoids "Session ID is already in use".
      this.state.providerSessionId = randomUUID();
    }
    const turn = this.state.turn;
    if (!turn) return;
    const pending = this.unacknowledged;
    if (
      pending &&
      !pending.retried &&
      ending.kind === 'exited' &&
      !this.stopped &&
      (this.stopReason === null || this.stopReason === 'idle')
    ) {
      // The process died before it said anything about this turn (e.g. it had just exited while
      // idle, or was being let go for a waiting session as the turn came in): the input never
      // reached the conversation, so send it once more to a new process.
      pending.retried = true;
      this.state.turn = null;
      void this.send(pending.turn, pending.control);
      return;
    }
    const classification = turn.failure
      ? { outcome: 'failed' as const, error: turn.failure }
      : classifyRunEnd(toRunEnding(ending, this.settings.binaryPath));
    this.endTurn(turn, classification);
  }
}
