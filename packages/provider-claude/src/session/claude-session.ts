import { randomUUID } from 'node:crypto';
import { AgentError, type ContextUsage, type InteractionAnswer, type PermissionMode, type SerializedAgentError, type SessionConfiguration } from '@tether/protocol';
import type {
  AgentProviderV1Control,
  AgentProviderV1Part,
  AgentProviderV1Session,
  AgentProviderV1SessionOptions,
  AgentProviderV1StopReason,
  AgentProviderV1Turn,
} from '@tether/provider-spec';
import { classifyRunEnd } from '../classify/classify-run-end.js';
import type { DecodedLine } from '../codec/line-decoder.js';
import { ControlChannel } from '../control/control-channel.js';
import { type CliFrame, parseCliFrame } from '../frames/cli-frame-schemas.js';
import { buildClaudeArguments } from '../launch/build-arguments.js';
import { buildClaudeEnvironment } from '../launch/build-environment.js';
import { cliPermissionModes, toNeutralPermissionMode } from '../launch/permission-modes.js';
import { translateFrame } from '../translate/translate-frame.js';
import { type ActiveTurn, type TranslatorState, createTranslatorState } from '../translate/translator-state.js';
import { ClaudeProcess, type ProcessExit } from './claude-process.js';
import { toContextUsage } from './context-usage.js';
import { acknowledgesInput } from './acknowledgement.js';
import { requestInterrupt } from './interrupt-request.js';
import type { PoolMember, ProcessPool } from './process-pool.js';
import type { Launcher, ProcessRoute, Spare, WarmPool } from './warm-pool.js';
import { StallWatchdog } from './stall-watchdog.js';
import { type ToolPromptPolicy, ToolPrompts } from './tool-prompts.js';

export interface ClaudeSessionSettings extends ToolPromptPolicy {
  readonly binaryPath: string;
  readonly inheritedEnvironment: Readonly<Record<string, string | undefined>>;
  readonly keepInheritedOAuthToken: boolean;
  readonly maxRetries: number | undefined;
  /** Shared by the provider's sessions: at most N processes at once. */
  readonly pool: ProcessPool;
  /** Initialized spare processes for new sessions, when the host turned them on. */
  readonly warmPool: WarmPool | null;
  /** An idle process is stopped after this long (the next turn resumes); 0 keeps it. */
  readonly idleReleaseMs: number;
  /** A run waiting on the API with no frame for this long is stopped and failed provider_stalled. */
  readonly stallTimeoutMs: number;
  /** How long a stalled run's stop may take before its process is killed. */
  readonly stallGraceMs: number;
}

const closingMessage = 'The session is closing, so this request was not permitted.';

type StopReason = 'idle' | 'closed' | 'released';

function sessionClosed(): AgentError {
  return new AgentError({ code: 'session_closed', message: 'This session\'s agent process was stopped. Reopen the session to continue.' });
}

function stalled(stallTimeoutMs: number): SerializedAgentError {
  return new AgentError({
    code: 'provider_stalled',
    message: `The model API sent nothing for ${stallTimeoutMs >= 1000 ? `${Math.round(stallTimeoutMs / 1000)} s` : `${stallTimeoutMs} ms`}, so the run was stopped. Retry the turn; if it keeps happening, check the API (ANTHROPIC_BASE_URL) and the network.`,
    details: { reason: 'no_frames' },
  }).toObject();
}

/**
 * One Claude conversation. Its process starts with the first turn (the user line is written at
 * spawn, without waiting for initialize) and can end without the conversation ending — a crash, an
 * idle release, a runtime shutdown — after which the next turn starts a new process with --resume.
 */
export class ClaudeSession implements AgentProviderV1Session, PoolMember {
  private readonly options: AgentProviderV1SessionOptions;
  private readonly settings: ClaudeSessionSettings;
  private readonly emit: (part: AgentProviderV1Part) => void;
  private readonly prompts: ToolPrompts;
  private readonly watchdog: StallWatchdog;
  private process: ClaudeProcess | null = null;
  private control: ControlChannel | null = null;
  private state: TranslatorState;
  private stopped = false;
  private stopReason: StopReason | null = null;
  private lastActivity = Date.now();
  private idleTimer: NodeJS.Timeout | null = null;
  /** The configuration the next process starts with (mode and model follow live changes). */
  private configuration: SessionConfiguration;
  /** The permission mode the running process was launched with. */
  private launchedMode: PermissionMode | undefined;
  private interrupting: { readonly runId: string; readonly done: Promise<{ applied: boolean }> } | null = null;
  /** The current turn's input, kept until the CLI acknowledges it. */
  private unacknowledged: { readonly turn: AgentProviderV1Turn; readonly control: string | undefined; retried: boolean } | null = null;

  constructor(options: AgentProviderV1SessionOptions, settings: ClaudeSessionSettings) {
    this.options = options;
    this.settings = settings;
    this.emit = options.emit;
    this.configuration = options.configuration;
    this.state = createTranslatorState({
      providerSessionId: options.resumeProviderSessionId ?? randomUUID(),
      reportedProviderSessionId: options.resumeProviderSessionId,
      conversationEstablished: options.resumeProviderSessionId !== null,
    });
    this.prompts = new ToolPrompts({ policy: settings, emit: (part) => this.emit(part), note: (code) => this.note(code) });
    this.watchdog = new StallWatchdog({
      timeoutMs: settings.stallTimeoutMs,
      // Only time waiting on the model API counts: not the CLI starting up, a tool running, or the host deciding.
      waitingOnApi: () => this.state.turn?.requesting === true && this.state.turn.toolsRunning === 0 && this.prompts.size === 0,
      onStall: () => this.onStall(),
    });
    settings.pool.register(this);
    if (settings.warmPool && !this.state.conversationEstablished) settings.warmPool.prepare(this.launchKey(), this.launcher());
  }

  // ---- turns and controls ----------------------------------------------------------------

  async doTurn(turn: AgentProviderV1Turn, control?: string): Promise<void> {
    if (this.stopped) throw sessionClosed();
    if (this.state.turn) throw new AgentError({ code: 'run_active', message: 'The claude CLI is still working on the previous turn.' });
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
    this.cancelIdleRelease();
    const processHandle = this.process ?? (await this.startProcess(turn.runId));
    // Stopped while waiting for a process slot: nothing to send.
    if (!processHandle || this.state.turn !== active) return;
    this.lastActivity = Date.now();
    this.watchdog.touch();
    const text = turn.input.map((part) => part.text);
    const content = text.length === 1 ? text[0] : text.map((part) => ({ type: 'text', text: part }));
    // A failed write means the process is gone; its exit handler retries or completes the run.
    processHandle.write({ type: 'user', message: { role: 'user', content }, parent_tool_use_id: null, uuid });
  }

  // ---- stop, interrupt, answers, modes, queries -------------------------------------------

  async doStop(reason: AgentProviderV1StopReason): Promise<void> {
    this.stopped = true;
    this.cancelIdleRelease();
    this.watchdog.stop();
    // Nothing is left waiting and nothing is allowed on the way out.
    this.prompts.denyAll((requestId, response) => this.control?.respond(requestId, response) ?? false, closingMessage);
    await this.stopProcess(reason === 'close' ? 'closed' : 'released');
    this.settings.pool.unregister(this);
  }

  doInterrupt({ runId }: { runId: string }): Promise<{ applied: boolean }> {
    const turn = this.state.turn;
    if (!turn || turn.runId !== runId) return Promise.resolve({ applied: false });
    if (this.interrupting?.runId === runId) return this.interrupting.done;
    // Recorded before the round-trip: a result arriving first still ends the run as interrupted.
    turn.interruptRequested = true;
    if (!this.process || !this.control) {
      // Waiting for a process slot (or none started): the run ends here, nothing reached the CLI.
      this.endTurn(turn, { outcome: 'interrupted' });
      return Promise.resolve({ applied: true });
    }
    const done = requestInterrupt(this.control, turn, () => {
      if (this.state.turn === turn) this.endTurn(turn, { outcome: 'interrupted' });
    }).finally(() => {
      if (this.interrupting?.done === done) this.interrupting = null;
    });
    this.interrupting = { runId, done };
    return done;
  }

  async doRespond({ interactionRef, answer }: { interactionRef: string; answer: InteractionAnswer }): Promise<void> {
    this.prompts.respond(interactionRef, answer, (requestId, response) => this.control?.respond(requestId, response) ?? false);
    this.watchdog.touch();
  }

  requiresRestartFor(mode: PermissionMode): boolean {
    // The CLI refuses to enter bypass mode live unless it was launched in it.
    return this.process !== null && mode === 'bypass' && this.launchedMode !== 'bypass';
  }

  async doSetPermissionMode(mode: PermissionMode): Promise<PermissionMode> {
    const restart = () => new AgentError({ code: 'requires_restart', message: 'The running claude CLI cannot enter bypass mode; it must be started in it.', details: { reason: mode } });
    if (this.requiresRestartFor(mode)) throw restart();
    this.configuration = { ...this.configuration, permissionMode: mode };
    if (!this.process || !this.control) return mode;
    let response: unknown;
    try {
      response = await this.control.request('set_permission_mode', { mode: cliPermissionModes[mode] });
    } catch (error) {
      if (AgentError.isInstance(error) && error.details?.reason === 'bypass_not_launched') throw restart();
      throw error;
    }
    const reported = typeof (response as { mode?: unknown })?.mode === 'string' ? toNeutralPermissionMode((response as { mode: string }).mode) : undefined;
    return reported ?? mode;
  }

  async doSetModel(model: string): Promise<string> {
    this.configuration = { ...this.configuration, model };
    if (!this.process || !this.control) return model;
    const response = (await this.control.request('set_model', { model: model === 'default' ? null : model })) as { model?: unknown } | undefined;
    return typeof response?.model === 'string' ? response.model : model;
  }

  async doGetContextUsage(): Promise<ContextUsage> {
    return toContextUsage((await (await this.controlChannel()).request('get_context_usage')) as Record<string, unknown> | undefined);
  }

  async doGetSessionCost(): Promise<{ report: string }> {
    const response = (await (await this.controlChannel()).request('get_session_cost')) as { text?: unknown } | undefined;
    return { report: typeof response?.text === 'string' ? response.text : '' };
  }

  /** The control channel of a running process, starting one (resuming the conversation) when none runs. */
  private async controlChannel(): Promise<ControlChannel> {
    if (this.stopped) throw sessionClosed();
    if (!this.process) await this.startProcess(null);
    if (!this.control) throw sessionClosed();
    return this.control;
  }

  // ---- the process pool ------------------------------------------------------------------

  canRelease(): boolean {
    return this.process !== null && this.state.turn === null && this.prompts.size === 0 && this.state.backgroundTasks === 0;
  }

  release(): Promise<void> {
    return this.stopProcess('idle');
  }

  lastActiveAt(): number {
    return this.lastActivity;
  }

  // ---- process lifecycle -----------------------------------------------------------------

  /** A process for the session, once the pool grants a slot; null if the session stopped meanwhile. */
  private async startProcess(runId: string | null): Promise<ClaudeProcess | null> {
    const spare = this.settings.warmPool && !this.state.conversationEstablished ? await this.settings.warmPool.take(this.launchKey()) : undefined;
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
    return this.process ?? this.spawn();
  }

  /** Spares are interchangeable only between sessions that would launch the claude command the same way. */
  private launchKey(): string {
    return JSON.stringify([this.settings.binaryPath, this.options.workspace.path, this.options.ephemeral, this.configuration]);
  }

  private launch(conversation: { kind: 'new' | 'resume'; providerSessionId: string }, route: ProcessRoute): ClaudeProcess {
    return new ClaudeProcess({
      binaryPath: this.settings.binaryPath,
      argv: buildClaudeArguments({ configuration: this.configuration, conversation, ephemeral: this.options.ephemeral }),
      environment: buildClaudeEnvironment({
        inherited: this.settings.inheritedEnvironment,
        session: this.configuration.environment,
        keepInheritedOAuthToken: this.settings.keepInheritedOAuthToken,
        maxRetries: this.settings.maxRetries,
      }),
      cwd: this.options.workspace.path,
      onLine: (line) => route.onLine(line),
      onExit: (exit) => route.onExit(exit),
    });
  }

  private launcher(): Launcher {
    return (providerSessionId, route) => this.launch({ kind: 'new', providerSessionId }, route);
  }

  /** Per-process memory (cost baseline, open messages) starts again; the conversation and the turn carry over. */
  private beginProcess(processHandle: ClaudeProcess, control: ControlChannel, providerSessionId: string): void {
    const previous = this.state;
    this.state = createTranslatorState({
      providerSessionId,
      reportedProviderSessionId: previous.reportedProviderSessionId,
      conversationEstablished: previous.conversationEstablished,
    });
    this.state.turn = previous.turn;
    this.stopReason = null;
    this.process = processHandle;
    this.control = control;
    this.launchedMode = this.configuration.permissionMode;
    if (processHandle.pid !== undefined) {
      this.emit({ type: 'session.process_started', pid: processHandle.pid, startTime: processHandle.startTime ?? null, marker: processHandle.marker });
    }
  }

  private spawn(): ClaudeProcess {
    const providerSessionId = this.state.providerSessionId!;
    const conversation = { kind: this.state.conversationEstablished ? ('resume' as const) : ('new' as const), providerSessionId };
    const processHandle = this.launch(conversation, { onLine: (line) => this.onLine(line), onExit: (exit) => this.onExit(processHandle, exit) });
    this.beginProcess(processHandle, new ControlChannel({ write: (message) => processHandle.write(message) }), providerSessionId);
    return processHandle;
  }

  /** Takes over an initialized spare: its slot, its process and the conversation id it was started with. */
  private adopt(spare: Spare): ClaudeProcess {
    this.settings.pool.transfer(spare.member, this);
    spare.adopt({ onLine: (line) => this.onLine(line), onExit: (exit) => this.onExit(spare.process, exit) });
    this.beginProcess(spare.process, spare.control, spare.providerSessionId);
    this.settings.warmPool?.prepare(this.launchKey(), this.launcher());
    return spare.process;
  }

  private async stopProcess(reason: StopReason): Promise<void> {
    const processHandle = this.process;
    if (!processHandle) return;
    this.stopReason = reason;
    await processHandle.stop({ busy: this.state.turn !== null });
  }

  private scheduleIdleRelease(): void {
    this.cancelIdleRelease();
    if (this.settings.idleReleaseMs <= 0 || this.stopped) return;
    this.idleTimer = setTimeout(() => {
      this.idleTimer = null;
      // A process with background tasks keeps running: stopping it would kill them.
      if (this.canRelease()) void this.release();
      else if (this.process && this.state.turn === null) this.scheduleIdleRelease();
    }, this.settings.idleReleaseMs);
    this.idleTimer.unref();
  }

  private cancelIdleRelease(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
  }

  // ---- output ----------------------------------------------------------------------------

  private note(code: string): void {
    if (this.state.notedDiagnostics.has(code)) return;
    this.state.notedDiagnostics.add(code);
    this.emit({ type: 'diagnostic', level: 'warning', code, ...(this.state.turn ? { runId: this.state.turn.runId } : {}) });
  }

  private onLine(line: DecodedLine): void {
    this.lastActivity = Date.now();
    if (this.state.turn) this.watchdog.touch();
    if (line.kind === 'junk') return this.note('claude.stdout_not_json');
    if (line.kind === 'oversized') return this.note('claude.stdout_line_too_long');
    const frame = parseCliFrame(line.value);
    if (this.unacknowledged && this.state.turn && acknowledgesInput(frame, this.state.turn.uuid)) this.unacknowledged = null;
    if (frame.kind === 'control_request' || frame.kind === 'control_response' || frame.kind === 'control_cancel_request') {
      this.onControlFrame(frame);
      return;
    }
    const turn = this.state.turn;
    const parts = translateFrame(this.state, frame);
    if (turn?.stalled) {
      // A stall ends the run as failed whatever the CLI reports for it.
      for (const part of parts) this.emit(part.type === 'run.completed' && part.runId === turn.runId ? { type: 'run.completed', runId: turn.runId, outcome: 'failed', error: stalled(this.settings.stallTimeoutMs) } : part);
    } else {
      for (const part of parts) this.emit(part);
    }
    if (turn && this.state.turn === null) this.afterTurn(turn);
  }

  private onControlFrame(frame: Extract<CliFrame, { kind: 'control_request' | 'control_response' | 'control_cancel_request' }>): void {
    if (frame.kind === 'control_response') {
      this.control?.handleResponse(frame.frame);
      return;
    }
    if (frame.kind === 'control_cancel_request') {
      this.prompts.withdraw(frame.frame.request_id);
      return;
    }
    const { request_id: requestId, request } = frame.frame;
    if (request.subtype === 'can_use_tool') {
      this.prompts.onRequest(requestId, request, this.state.turn?.runId ?? null, (id, response) => this.control?.respond(id, response) ?? false);
      return;
    }
    // Requests Tether does not serve (hooks, MCP over stdio, ...) get an error answer, never silence.
    this.process?.write({ type: 'control_response', response: { subtype: 'error', request_id: requestId, error: `Unsupported control request subtype: ${request.subtype}` } });
  }

  /** Ends the current turn from outside the CLI's own result (interrupted before it started, stalled, crashed). */
  private endTurn(turn: ActiveTurn, classification: { outcome: 'succeeded' | 'failed' | 'interrupted'; error?: SerializedAgentError | undefined }): void {
    if (this.state.turn !== turn) return;
    this.state.turn = null;
    this.unacknowledged = null;
    this.emit({ type: 'run.completed', runId: turn.runId, outcome: classification.outcome, ...(classification.error ? { error: classification.error } : {}) });
    this.afterTurn(turn);
  }

  private afterTurn(turn: ActiveTurn): void {
    this.prompts.forgetRun(turn.runId);
    this.watchdog.stop();
    if (this.process) this.scheduleIdleRelease();
  }

  private onStall(): void {
    const turn = this.state.turn;
    if (!turn || turn.stalled) return;
    turn.stalled = true;
    this.note('claude.stall_detected');
    const control = this.control;
    if (control) void requestInterrupt(control, turn, () => this.endTurn(turn, { outcome: 'failed', error: stalled(this.settings.stallTimeoutMs) })).catch(() => undefined);
    // If the stop does not settle in time, the process goes; its exit fails the run.
    const grace = setTimeout(() => {
      if (this.state.turn === turn) void this.stopProcess('released');
    }, this.settings.stallGraceMs);
    grace.unref();
  }

  private onExit(processHandle: ClaudeProcess, exit: ProcessExit): void {
    if (this.process !== processHandle) return;
    this.process = null;
    this.settings.pool.release(this);
    this.cancelIdleRelease();
    this.control?.cancelAll(new AgentError({ code: 'provider_crashed', message: 'The claude CLI exited.', details: { reason: 'process_exited' } }));
    this.control = null;
    this.prompts.clear();
    if (exit.kind === 'exited') {
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
    if (pending && !pending.retried && exit.kind === 'exited' && !this.stopped && this.stopReason === null) {
      // The process died before it said anything about this turn (e.g. it had just exited while
      // idle): the input never reached the conversation, so send it once more to a new process.
      pending.retried = true;
      this.state.turn = null;
      void this.send(pending.turn, pending.control);
      return;
    }
    const classification = turn.stalled
      ? { outcome: 'failed' as const, error: stalled(this.settings.stallTimeoutMs) }
      : classifyRunEnd(
          exit.kind === 'spawn_failed'
            ? { kind: 'spawn_failed', binaryPath: this.settings.binaryPath, errorCode: exit.errorCode }
            : { kind: 'process_exited', exitCode: exit.exitCode, signal: exit.signal, stderrTail: exit.stderrTail },
        );
    this.endTurn(turn, classification);
  }
}
