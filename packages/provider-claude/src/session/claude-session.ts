import { randomUUID } from 'node:crypto';
import { AgentError, type ContextUsage, type InteractionAnswer, type PermissionMode, type SessionConfiguration, newInteractionRef } from '@tether/protocol';
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
import { type ToolPermissionRequest, buildInteraction, ToolPermissionRequest as ToolPermissionRequestSchema } from '../interactions/build-interaction.js';
import { buildPermissionResponse } from '../interactions/build-permission-response.js';
import { translateFrame } from '../translate/translate-frame.js';
import { type TranslatorState, createTranslatorState } from '../translate/translator-state.js';
import { ClaudeProcess, type ProcessExit } from './claude-process.js';

export interface ClaudeSessionSettings {
  readonly binaryPath: string;
  readonly inheritedEnvironment: Readonly<Record<string, string | undefined>>;
  readonly keepInheritedOAuthToken: boolean;
  readonly maxRetries: number | undefined;
  /** bridge: the host decides each tool prompt; deny: every prompt is denied with a message. */
  readonly approvals: 'bridge' | 'deny';
  /** bridge: AskUserQuestion reaches the host; deny: the model is told to ask in its reply. */
  readonly questions: 'bridge' | 'deny';
  readonly toolInputDetail: 'full' | 'none';
}

const approvalsDeniedMessage = 'This tool call was not permitted: the host does not accept tool approvals in this session. Continue without it.';
const questionsDeniedMessage = 'Questions cannot be shown to the user in this session. Ask them in your reply instead.';
const closingMessage = 'The session is closing, so this request was not permitted.';

/** A CLI tool prompt raised to the host as an interaction, waiting for its answer. */
interface OpenPrompt {
  readonly requestId: string;
  readonly runId: string;
  readonly request: ToolPermissionRequest;
}

/**
 * One Claude conversation. Its process starts with the first turn (the user line is written at
 * spawn, without waiting for initialize) and can end without the conversation ending: the next
 * turn starts a new process with --resume.
 */
export class ClaudeSession implements AgentProviderV1Session {
  private readonly options: AgentProviderV1SessionOptions;
  private readonly settings: ClaudeSessionSettings;
  private readonly emit: (part: AgentProviderV1Part) => void;
  private process: ClaudeProcess | null = null;
  private control: ControlChannel | null = null;
  private state: TranslatorState;
  private stopped = false;
  /** The configuration the next process starts with (the mode follows set_permission_mode). */
  private configuration: SessionConfiguration;
  /** The permission mode the running process was launched with. */
  private launchedMode: PermissionMode | undefined;
  private readonly prompts = new Map<string, OpenPrompt>();
  /** The stop request in flight for the current turn: concurrent interrupts share it. */
  private interrupting: { readonly runId: string; readonly done: Promise<{ applied: boolean }> } | null = null;
  /** The current turn's input, kept until the CLI acknowledges it (any output after the write). */
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
  }

  async doControl(control: AgentProviderV1Control): Promise<void> {
    // Slash commands are user lines the CLI recognises; the turn is marked so its result completes the control.
    const text = `/${control.name}${control.argument === undefined ? '' : ` ${control.argument}`}`;
    await this.doTurn({ runId: control.runId, input: [{ type: 'text', text }] }, control.name);
  }

  async doSetModel(model: string): Promise<string> {
    this.configuration = { ...this.configuration, model };
    if (!this.process || !this.control) return model;
    const response = (await this.control.request('set_model', { model: model === 'default' ? null : model })) as { model?: unknown } | undefined;
    return typeof response?.model === 'string' ? response.model : model;
  }

  async doGetContextUsage(): Promise<ContextUsage> {
    const response = (await this.controlChannel().request('get_context_usage')) as Record<string, unknown> | undefined;
    const number = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : 0);
    const categories = Array.isArray(response?.categories) ? (response.categories as Record<string, unknown>[]) : [];
    return {
      model: typeof response?.model === 'string' ? response.model.slice(0, 200) : null,
      totalTokens: number(response?.totalTokens),
      maxTokens: number(response?.maxTokens),
      percentage: number(response?.percentage),
      categories: categories.slice(0, 100).map((category) => ({ name: String(category.name ?? category.id ?? 'unknown').slice(0, 200), tokens: number(category.tokens) })),
    };
  }

  async doGetSessionCost(): Promise<{ report: string }> {
    const response = (await this.controlChannel().request('get_session_cost')) as { text?: unknown } | undefined;
    return { report: typeof response?.text === 'string' ? response.text : '' };
  }

  /** The control channel of a running process, starting one (resuming the conversation) when none runs. */
  private controlChannel(): ControlChannel {
    if (this.stopped) throw new AgentError({ code: 'session_closed', message: 'This session\'s agent process was stopped. Reopen the session to continue.' });
    if (!this.process) this.spawn();
    return this.control!;
  }

  async doTurn(turn: AgentProviderV1Turn, control?: string): Promise<void> {
    if (this.stopped) {
      throw new AgentError({ code: 'session_closed', message: 'This session\'s agent process was stopped. Reopen the session to continue.' });
    }
    if (this.state.turn) {
      throw new AgentError({ code: 'run_active', message: 'The claude CLI is still working on the previous turn.' });
    }
    this.unacknowledged = { turn, control, retried: false };
    this.send(turn, control);
  }

  private send(turn: AgentProviderV1Turn, control?: string): void {
    const processHandle = this.process ?? this.spawn();
    const uuid = randomUUID();
    this.state.turn = { runId: turn.runId, uuid, started: false, interruptRequested: this.state.turn?.runId === turn.runId && this.state.turn.interruptRequested, ...(control !== undefined ? { control } : {}) };
    const text = turn.input.map((part) => part.text);
    const content = text.length === 1 ? text[0] : text.map((part) => ({ type: 'text', text: part }));
    // A failed write means the process is gone; its exit handler retries or completes the run.
    processHandle.write({ type: 'user', message: { role: 'user', content }, parent_tool_use_id: null, uuid });
  }

  async doStop(_reason: AgentProviderV1StopReason): Promise<void> {
    this.stopped = true;
    // Nothing is left waiting and nothing is allowed on the way out.
    for (const prompt of this.prompts.values()) this.control?.respond(prompt.requestId, { behavior: 'deny', message: closingMessage });
    this.prompts.clear();
    const processHandle = this.process;
    if (!processHandle) return;
    await processHandle.stop({ busy: this.state.turn !== null });
  }

  doInterrupt({ runId }: { runId: string }): Promise<{ applied: boolean }> {
    const turn = this.state.turn;
    if (!turn || turn.runId !== runId) return Promise.resolve({ applied: false });
    if (this.interrupting?.runId === runId) return this.interrupting.done;
    // Recorded before the round-trip: a result arriving first still ends the run as interrupted.
    turn.interruptRequested = true;
    const done = this.requestInterrupt(turn).finally(() => {
      if (this.interrupting?.done === done) this.interrupting = null;
    });
    this.interrupting = { runId, done };
    return done;
  }

  private async requestInterrupt(turn: NonNullable<TranslatorState['turn']>): Promise<{ applied: boolean }> {
    const control = this.control;
    // No process yet (it failed to start) or already gone: its exit ends the run.
    if (!control || !this.process) return { applied: true };
    // cancel_queued makes a stop mean stop (queued input is dropped, not run afterwards). Before the
    // first init the CLI's capabilities are unknown; the receipt's shape tells which rules apply.
    const response = (await control.request('interrupt', { cancel_queued: true }, { timeoutMs: 15_000 })) as { still_queued?: unknown; cancelled?: unknown } | undefined;
    const stillQueued = Array.isArray(response?.still_queued) ? (response.still_queued as unknown[]) : [];
    const cancelled = Array.isArray(response?.cancelled) ? (response.cancelled as unknown[]) : undefined;
    if (cancelled?.includes(turn.uuid)) {
      // The input never started, so no result will come for it: the receipt is the end of the run.
      if (this.state.turn === turn) {
        this.state.turn = null;
        this.unacknowledged = null;
        this.forgetPrompts(turn.runId);
        this.emit({ type: 'run.completed', runId: turn.runId, outcome: 'interrupted' });
      }
      return { applied: true };
    }
    if (cancelled === undefined && stillQueued.includes(turn.uuid) && turn.started) {
      // Older CLIs: a started turn whose input is still queued was not stopped; a retry can stop it.
      turn.interruptRequested = false;
      throw new AgentError({ code: 'provider_rejected', message: 'The claude CLI did not apply the stop (the input was still queued). Interrupt again.', details: { reason: 'input_still_queued' } });
    }
    return { applied: true };
  }

  async doRespond({ interactionRef, answer }: { interactionRef: string; answer: InteractionAnswer }): Promise<void> {
    const prompt = this.prompts.get(interactionRef);
    if (!prompt) {
      throw new AgentError({ code: 'interaction_already_settled', message: 'The claude CLI is no longer waiting for this answer (it withdrew the prompt or its turn ended).' });
    }
    this.prompts.delete(interactionRef);
    const written = this.control?.respond(prompt.requestId, buildPermissionResponse(prompt.request, answer)) ?? false;
    if (!written) {
      throw new AgentError({ code: 'provider_crashed', message: 'The claude CLI is not running any more, so the answer could not be delivered.', details: { reason: 'stdin_closed' } });
    }
  }

  requiresRestartFor(mode: PermissionMode): boolean {
    // The CLI refuses to enter bypass mode live unless it was launched in it.
    return this.process !== null && mode === 'bypass' && this.launchedMode !== 'bypass';
  }

  async doSetPermissionMode(mode: PermissionMode): Promise<PermissionMode> {
    if (this.requiresRestartFor(mode)) {
      throw new AgentError({ code: 'requires_restart', message: 'The running claude CLI cannot enter bypass mode; it must be started in it.', details: { reason: mode } });
    }
    this.configuration = { ...this.configuration, permissionMode: mode };
    if (!this.process || !this.control) return mode;
    let response: unknown;
    try {
      response = await this.control.request('set_permission_mode', { mode: cliPermissionModes[mode] });
    } catch (error) {
      if (AgentError.isInstance(error) && error.details?.reason === 'bypass_not_launched') {
        throw new AgentError({ code: 'requires_restart', message: 'The running claude CLI cannot enter bypass mode; it must be started in it.', details: { reason: mode } });
      }
      throw error;
    }
    const reported = typeof (response as { mode?: unknown })?.mode === 'string' ? toNeutralPermissionMode((response as { mode: string }).mode) : undefined;
    return reported ?? mode;
  }

  private spawn(): ClaudeProcess {
    const conversation = this.state.conversationEstablished
      ? ({ kind: 'resume', providerSessionId: this.state.providerSessionId! } as const)
      : ({ kind: 'new', providerSessionId: this.state.providerSessionId! } as const);
    // Per-process memory (cost baseline, open messages) starts again; the conversation carries over.
    const previous = this.state;
    this.state = createTranslatorState({
      providerSessionId: previous.providerSessionId,
      reportedProviderSessionId: previous.reportedProviderSessionId,
      conversationEstablished: previous.conversationEstablished,
    });
    const processHandle = new ClaudeProcess({
      binaryPath: this.settings.binaryPath,
      argv: buildClaudeArguments({ configuration: this.configuration, conversation, ephemeral: this.options.ephemeral }),
      environment: buildClaudeEnvironment({
        inherited: this.settings.inheritedEnvironment,
        session: this.configuration.environment,
        keepInheritedOAuthToken: this.settings.keepInheritedOAuthToken,
        maxRetries: this.settings.maxRetries,
      }),
      cwd: this.options.workspace.path,
      onLine: (line) => this.onLine(line),
      onExit: (exit) => this.onExit(processHandle, exit),
    });
    this.process = processHandle;
    this.launchedMode = this.configuration.permissionMode;
    this.control = new ControlChannel({ write: (message) => processHandle.write(message) });
    return processHandle;
  }

  private note(code: string): void {
    if (this.state.notedDiagnostics.has(code)) return;
    this.state.notedDiagnostics.add(code);
    this.emit({ type: 'diagnostic', level: 'warning', code, ...(this.state.turn ? { runId: this.state.turn.runId } : {}) });
  }

  /** Whether a frame shows the CLI took the current turn's input (lines still in the pipe from before do not). */
  private acknowledges(frame: CliFrame): boolean {
    const uuid = this.state.turn?.uuid;
    if (uuid === undefined) return false;
    switch (frame.kind) {
      case 'command_lifecycle':
        return frame.frame.command_uuid === uuid;
      case 'system':
      case 'stream_event':
        return frame.frame.user_message_uuids?.includes(uuid) ?? false;
      case 'result':
        return true;
      default:
        return false;
    }
  }

  private onLine(line: DecodedLine): void {
    if (line.kind === 'junk') return this.note('claude.stdout_not_json');
    if (line.kind === 'oversized') return this.note('claude.stdout_line_too_long');
    const frame = parseCliFrame(line.value);
    if (this.unacknowledged && this.acknowledges(frame)) this.unacknowledged = null;
    if (frame.kind === 'control_request' || frame.kind === 'control_response' || frame.kind === 'control_cancel_request') {
      this.onControlFrame(frame);
      return;
    }
    const turn = this.state.turn;
    for (const part of translateFrame(this.state, frame)) this.emit(part);
    // A turn's end means the CLI waits for none of its prompts any more.
    if (turn && this.state.turn === null) this.forgetPrompts(turn.runId);
  }

  private forgetPrompts(runId: string): void {
    for (const [ref, prompt] of this.prompts) if (prompt.runId === runId) this.prompts.delete(ref);
  }

  private onControlFrame(frame: Extract<CliFrame, { kind: 'control_request' | 'control_response' | 'control_cancel_request' }>): void {
    if (frame.kind === 'control_response') {
      this.control?.handleResponse(frame.frame);
      return;
    }
    if (frame.kind === 'control_cancel_request') {
      for (const [ref, prompt] of this.prompts) {
        if (prompt.requestId !== frame.frame.request_id) continue;
        this.prompts.delete(ref);
        this.emit({ type: 'interaction.withdrawn', runId: prompt.runId, interactionRef: ref });
      }
      return;
    }
    const { request_id: requestId, request } = frame.frame;
    if (request.subtype === 'can_use_tool') {
      this.onToolPrompt(requestId, request);
      return;
    }
    // Requests Tether does not serve (hooks, MCP over stdio, ...) get an error answer, never silence.
    this.process?.write({ type: 'control_response', response: { subtype: 'error', request_id: requestId, error: `Unsupported control request subtype: ${request.subtype}` } });
  }

  /** Every tool prompt is answered exactly once: raised to the host, or denied at once. */
  private onToolPrompt(requestId: string, raw: unknown): void {
    const deny = (message: string, code: string) => {
      this.control?.respond(requestId, { behavior: 'deny', message });
      this.note(code);
    };
    const parsed = ToolPermissionRequestSchema.safeParse(raw);
    if (!parsed.success) return deny('The tool request could not be read, so it was not permitted.', 'claude.prompt_malformed');
    const request = parsed.data;
    const turn = this.state.turn;
    if (!turn) return deny('This tool request belongs to no active turn, so it was not permitted.', 'claude.prompt_without_run');
    const isQuestion = request.tool_name === 'AskUserQuestion';
    if (isQuestion && this.settings.questions === 'deny') return deny(questionsDeniedMessage, 'claude.questions_denied_by_policy');
    if (!isQuestion && this.settings.approvals === 'deny') return deny(approvalsDeniedMessage, 'claude.approvals_denied_by_policy');
    const built = buildInteraction(request, { toolInputDetail: this.settings.toolInputDetail });
    if ('refusal' in built) {
      return deny(`These questions could not be shown to the user (${built.refusal.replaceAll('_', ' ')}). Ask in your reply instead.`, `claude.question_refused.${built.refusal}`);
    }
    const interactionRef = newInteractionRef();
    this.prompts.set(interactionRef, { requestId, runId: turn.runId, request });
    this.emit({ type: 'interaction.requested', runId: turn.runId, interactionRef, request: built.request });
  }

  private onExit(processHandle: ClaudeProcess, exit: ProcessExit): void {
    if (this.process !== processHandle) return;
    this.process = null;
    this.control?.cancelAll(new AgentError({ code: 'provider_crashed', message: 'The claude CLI exited.', details: { reason: 'process_exited' } }));
    this.control = null;
    this.prompts.clear();
    const turn = this.state.turn;
    if (!this.state.conversationEstablished && this.state.providerSessionId && !this.options.ephemeral) {
      // Nothing was recorded under this id; a fresh one avoids "Session ID is already in use".
      this.state.providerSessionId = randomUUID();
    }
    if (!turn) return;
    this.state.turn = null;
    const pending = this.unacknowledged;
    if (pending && !pending.retried && exit.kind === 'exited' && !this.stopped) {
      // The process died before it said anything about this turn (e.g. it had just exited
      // while idle): the input never reached the conversation, so send it once more to a new process.
      pending.retried = true;
      this.send(pending.turn, pending.control);
      return;
    }
    this.unacknowledged = null;
    const classification = classifyRunEnd(
      exit.kind === 'spawn_failed'
        ? { kind: 'spawn_failed', binaryPath: this.settings.binaryPath, errorCode: exit.errorCode }
        : { kind: 'process_exited', exitCode: exit.exitCode, signal: exit.signal, stderrTail: exit.stderrTail },
    );
    this.emit({ type: 'run.completed', runId: turn.runId, outcome: classification.outcome, ...(classification.error ? { error: classification.error } : {}) });
  }
}
