import {
  type AgentContext,
  type ClientCapabilities,
  type InitializeRequest,
  type InitializeResponse,
  type ListSessionsRequest,
  type ListSessionsResponse,
  type LoadSessionResponse,
  type NewSessionRequest,
  type NewSessionResponse,
  type PromptRequest,
  type PromptResponse,
  RequestError,
  type SessionConfigOption,
  type SessionUpdate,
  type SetSessionConfigOptionRequest,
  methods,
} from '@agentclientprotocol/sdk';
import {
  AgentError,
  type InteractionAnswer,
  type ModelList,
  PermissionMode,
  type ProviderCapabilities,
  type RunControlReceipt,
  type SessionSnapshot,
  VERSION,
  toAgentError,
} from '@tether/protocol';
import type { AcpHost, AcpLog } from './acp-host.js';
import { requestErrorOf } from './acp-errors.js';
import { availableCommands } from './available-commands.js';
import { initializeResponseOf } from './initialize-response.js';
import { type McpConfigurationFile, writeMcpConfiguration } from './mcp-configuration.js';
import { approvalAnswerOf, permissionRequestOf } from './permission-request.js';
import { type PromptRequestPlan, planPrompt, promptRefusalOf } from './prompt-input.js';
import { questionAnswerOf, questionElicitationOf, questionsUnsupportedAnswer } from './question-elicitation.js';
import { clientDirectory, DirectoryMatcher, requireSessionDirectory } from './session-directory.js';
import { type OpenInteraction, type RunEnd, SessionFollower } from './session-follower.js';
import { sessionDirectory, sessionInfoOf } from './session-info.js';
import { requestedSessionOptionsOf } from './requested-session-options.js';
import { type ChosenModel, configOptions, modeOptionId, modelOptionId, sessionModes } from './session-modes.js';
import { promptEnding } from './stop-reason.js';

/** A prompt this connection is serving. */
interface ServedPrompt {
  runId: string | null;
  /** Set when the prompt came while a run was active and waits to run after it (queued as runId). */
  inputId: string | null;
  cancelRequested: boolean;
  /** Wakes a control waiting for the runs ahead of it when the prompt is cancelled. */
  onCancel?: () => void;
}

/** A session this connection follows (made, loaded or resumed here). */
interface ServedSession {
  /** Replaced when the client loads the session again (its history replayed); the prompts wait on the current one. */
  follower: SessionFollower;
  readonly prompts: Set<ServedPrompt>;
  /** The MCP configuration this connection wrote for the session (session/new with servers). */
  readonly mcpConfiguration: McpConfigurationFile | null;
  /** Set once the session closed: its MCP file being removed. */
  released?: Promise<void>;
  /** The client was answered before the model list was known: the options are announced when it is. */
  modelOptionPending?: boolean;
  /** The model option's value this client last chose (Tether records only the model it resolves to). */
  chosenModel?: ChosenModel;
}

const sessionsPerPage = 100;

/** Those codes mean the interaction ended some other way: another host answered first, the run ended, or the session went. */
const settledElsewhere = new Set([
  'interaction_already_settled',
  'unknown_interaction',
  'session_closed',
  'session_not_found',
]);

/** A request whose parameters Tether cannot act on: -32602, with the Tether error (invalid_command) in `data`. */
function invalidRequest(message: string): RequestError {
  return requestErrorOf({ code: 'invalid_command', message, retryable: false });
}

/**
 * A request for a session this connection does not serve (never made, loaded or resumed here, or
 * closed since): ACP's -32002 with `data.sessionId`, and, as every refusal, the Tether error in `data`.
 */
function notServedError(sessionId: string): RequestError {
  const error = new AgentError({
    code: 'session_not_found',
    message: `Session ${sessionId} is not open on this connection (unknown, or closed since). Load it with session/load (or session/resume) in its folder first, or start a new one with session/new.`,
  });
  return new RequestError(-32002, error.message, { ...error.toObject(), sessionId });
}

/**
 * The ACP agent over one AcpHost, for one connection: every ACP method as a Tether command or
 * read, and every followed session's events as session/update notifications.
 */
export class TetherAcpAgent {
  readonly #host: AcpHost;
  readonly #log: AcpLog;
  readonly #sessions = new Map<string, ServedSession>();
  /** Answers being given to Tether (a client's pick, or a denial): waited for when the connection ends. */
  readonly #answering = new Set<Promise<void>>();
  #client: AgentContext | null = null;
  #clientCapabilities: ClientCapabilities = {};
  /** The provider's, read at initialize: whether the model can be set decides the model option before its list is read. */
  #capabilities: ProviderCapabilities | null = null;
  #models: Promise<ModelList | null> | null = null;
  /** The model list once read (null: none); undefined while it is being read. */
  #knownModels: ModelList | null | undefined = undefined;
  #closed = false;

  readonly #runsOutliveClient: boolean;

  constructor(host: AcpHost, log: AcpLog, options: { readonly runsOutliveClient?: boolean } = {}) {
    this.#runsOutliveClient = options.runsOutliveClient === true;
    this.#host = host;
    this.#log = log;
  }

  bind(client: AgentContext): void {
    this.#client = client;
  }

  async initialize(request: InitializeRequest): Promise<InitializeResponse> {
    this.#clientCapabilities = request.clientCapabilities ?? {};
    const capabilities = await this.#host.providerCapabilities();
    this.#capabilities = capabilities;
    // Not read yet: a session's agent, once started, answers it, where now an agent would start only for it.
    return initializeResponseOf(request, capabilities, VERSION);
  }

  async newSession(request: NewSessionRequest): Promise<NewSessionResponse> {
    const directory = clientDirectory(request.cwd);
    const requested = requestedSessionOptionsOf(request._meta);
    const mcpConfiguration = await writeMcpConfiguration(request.mcpServers);
    let snapshot: SessionSnapshot;
    try {
      // The agent starts while the user writes the first prompt, not when it is sent.
      const { sessionId } = await this.#host.openSession({
        workspace: { kind: 'directory', path: directory },
        ...requested,
        ...(mcpConfiguration ? { mcpConfigPath: mcpConfiguration.path } : {}),
        startAgent: true,
      });
      snapshot = await this.#host.getSession(sessionId);
    } catch (error) {
      await mcpConfiguration?.remove();
      throw error;
    }
    this.#log.info('session opened', { sessionId: snapshot.sessionId });
    // Read from its opening: its agent may have started before the snapshot was read, and that start asks for the model list.
    const served = this.#serve(snapshot, { replay: false, fromOpening: true, mcpConfiguration });
    const response = {
      sessionId: snapshot.sessionId,
      modes: sessionModes(snapshot),
      configOptions: this.#optionsForAnswer(snapshot, served),
    };
    this.#announceCommandsAfterResponse(snapshot.sessionId);
    return response;
  }

  /** session/load: the stored conversation as notifications, exactly once, then what happens next. */
  async loadSession(sessionId: string, cwd: string): Promise<LoadSessionResponse> {
    const snapshot = await this.#openForClient(sessionId, cwd);
    const served = this.#serve(snapshot, { replay: true, mcpConfiguration: null });
    await served.follower.reached(snapshot.lastSeq);
    return this.#settingsResponse(snapshot, served);
  }

  /** session/resume: what happens from now on, without the history. */
  async resumeSession(sessionId: string, cwd: string): Promise<LoadSessionResponse> {
    const snapshot = await this.#openForClient(sessionId, cwd);
    // Followed live here already (unless that failed): a new follower from now would skip what this one has yet
    // to handle (a run's end a prompt waits for), and ask the client again what it is being asked.
    const following = this.#sessions.get(sessionId);
    const served =
      following && following.follower.failure === null
        ? following
        : this.#serve(snapshot, { replay: false, mcpConfiguration: null });
    return this.#settingsResponse(snapshot, served);
  }

  /** The modes and options a load or resume answers with; the commands follow the answer. */
  #settingsResponse(snapshot: SessionSnapshot, served: ServedSession): LoadSessionResponse {
    // Asked at once: a load's replay cannot tell a reopened session's agent starting now from its earlier
    // starts, and an open session's agent may not start at all. With none to ask, one starts to read it.
    this.#modelList();
    const response = { modes: sessionModes(snapshot), configOptions: this.#optionsForAnswer(snapshot, served) };
    this.#announceCommandsAfterResponse(snapshot.sessionId);
    return response;
  }

  /** With a cwd: the sessions session/load accepts in that folder. */
  async listSessions(request: ListSessionsRequest): Promise<ListSessionsResponse> {
    const cwd = request.cwd === undefined || request.cwd === null ? null : clientDirectory(request.cwd);
    const page = await this.#host.listSessionPage({
      limit: sessionsPerPage,
      ...(request.cursor ? { cursor: request.cursor } : {}),
    });
    const matcher = new DirectoryMatcher();
    const accepted = await Promise.all(
      page.sessions.map((snapshot) => (cwd === null ? true : matcher.accepts(snapshot, cwd))),
    );
    const sessions = page.sessions.filter((_, index) => accepted[index]).map(sessionInfoOf);
    return { sessions, nextCursor: page.nextCursor };
  }

  /** Only a session this connection serves, as for a prompt: another host's is not closed by its id alone. */
  async closeSession(sessionId: string): Promise<void> {
    const served = this.#served(sessionId);
    await this.#host.closeSession({ sessionId });
    // The prompts still running end with the session: let the follower see the close first.
    const { lastSeq } = await this.#host.getSession(sessionId);
    await served.follower.reached(lastSeq).catch(() => {});
    await this.#release(sessionId, served);
  }

  async prompt(request: PromptRequest): Promise<PromptResponse> {
    const served = this.#served(request.sessionId);
    const plan = planPrompt(request.prompt);
    if (plan.kind === 'model') return this.#promptedModel(request.sessionId, plan.model);
    const prompt: ServedPrompt = { runId: null, inputId: null, cancelRequested: false };
    const { sessionId } = request;
    served.prompts.add(prompt);
    served.follower.expectOwnRun(true);
    try {
      // A prompt while another runs (a client that queues prompts, or another host's turn) waits
      // for it and runs next: after_turn. On an idle session it starts at once, as without it.
      const receipt =
        plan.kind === 'turn'
          ? await this.#host
              .submitTurn({ sessionId, input: plan.input, delivery: 'after_turn' })
              .catch((error: unknown) => {
                throw AgentError.isInstance(error) ? promptRefusalOf(error, plan.blocks) : error;
              })
          : await this.#controlWhenIdle(served, sessionId, plan, prompt);
      // Cancelled while it waited: it never ran.
      if (receipt === null) return { stopReason: 'cancelled' };
      const { runId } = receipt;
      served.follower.markOwnRun(runId);
      prompt.runId = runId;
      if ('inputId' in receipt && receipt.inputId !== undefined) {
        prompt.inputId = receipt.inputId;
        // Its run is known before it starts: the next run to start may be another host's.
        served.follower.expectOwnRun(false);
      }
      // A cancel that came while the run was being submitted applies to it now.
      if (prompt.cancelRequested) await this.#stop(sessionId, [prompt]);
      const ending = promptEnding(await this.#runEnd(served, runId), prompt.cancelRequested);
      if ('error' in ending) {
        this.#log.info('prompt failed', { sessionId, runId, code: ending.error.code });
        throw requestErrorOf(ending.error);
      }
      return { stopReason: ending.stopReason };
    } catch (error) {
      // Closed while it waited its turn (a control waits for the session to be idle): cancelled, as a
      // queued turn is, not refused.
      if (plan.kind === 'control' && toAgentError(error).code === 'session_closed' && prompt.runId === null)
        return { stopReason: 'cancelled' };
      throw error;
    } finally {
      served.follower.expectOwnRun(false);
      served.prompts.delete(prompt);
    }
  }

  /**
   * `/model NAME` typed as a prompt: set as the model option is (live, or from the next turn), so the
   * client's option follows at once (config_option_update), and said in the conversation.
   */
  async #promptedModel(sessionId: string, model: string): Promise<PromptResponse> {
    try {
      await this.#setModel(sessionId, model);
    } catch (error) {
      // The session closed while the set waited for its starting agent, which ended with it: the
      // prompt ends as a closed session's prompts do, not as a crash. One closed before the set
      // reached it is refused session_closed, which says how to reopen it.
      if (toAgentError(error).code !== 'session_closed' && (await this.#closedMeanwhile(sessionId)))
        return { stopReason: 'cancelled' };
      throw error;
    }
    // Told here too: a choice that changes only the option's value (default after opus, one model)
    // changes no model, so no session.model_changed tells it, and no answer carries the options.
    await this.#announceSettings(sessionId);
    await this.#notify(sessionId, {
      sessionUpdate: 'agent_message_chunk',
      content: { type: 'text', text: `Model set to ${model}.` },
    });
    return { stopReason: 'end_turn' };
  }

  /**
   * A control (slash command) cannot wait in the runtime's queue as a turn does: while runs are
   * ahead of it (the active one, then those queued) it waits for the last of them here, then starts.
   * Null when the prompt was cancelled while it waited.
   */
  async #controlWhenIdle(
    served: ServedSession,
    sessionId: string,
    plan: Extract<PromptRequestPlan, { kind: 'control' }>,
    prompt: ServedPrompt,
  ): Promise<RunControlReceipt | null> {
    const cancelled = new Promise<null>((resolve) => {
      prompt.onCancel = () => resolve(null);
    });
    for (let idleButRefused = 0; ; ) {
      if (prompt.cancelRequested) return null;
      try {
        return await this.#host.runControl({
          sessionId,
          name: plan.name,
          ...(plan.argument ? { argument: plan.argument } : {}),
        });
      } catch (error) {
        if (toAgentError(error).code !== 'run_active') throw error;
        const snapshot = await this.#host.getSession(sessionId);
        const queued = snapshot.queuedInputs.filter((input) => input.delivery === 'after_turn');
        const ahead = queued.at(-1)?.runId ?? snapshot.activeRunId;
        // A run that ended between the refusal and the snapshot: once more, but not forever.
        if (ahead === null) {
          if (++idleButRefused > 3) throw error;
          continue;
        }
        idleButRefused = 0;
        await Promise.race([this.#runEnd(served, ahead), cancelled]);
      }
    }
  }

  /** How the run ends, as the session's follower sees it: a session/load meanwhile replaces the follower. */
  async #runEnd(served: ServedSession, runId: string): Promise<RunEnd> {
    for (;;) {
      const { follower } = served;
      try {
        return await follower.waitForRun(runId);
      } catch (error) {
        // The replacing follower replays the whole log, this run's end included.
        if (served.follower === follower) throw error;
      }
    }
  }

  /**
   * session/cancel: the prompts this connection is serving stop; each ends cancelled. Those still
   * queued behind a run are withdrawn (never run); the running one is interrupted. A turn the agent
   * began by itself, which the client shows as it streams, is interrupted too: Stop ends what it shows.
   */
  async cancel(sessionId: string): Promise<void> {
    const served = this.#sessions.get(sessionId);
    if (!served) return;
    await this.#cancelPrompts(sessionId, served);
    const agentRun = served.follower.agentRun;
    if (agentRun !== null) await this.#interrupt(sessionId, agentRun);
  }

  /**
   * Every prompt served for the session ends cancelled: marked first, so that one whose submit is still
   * in flight stops once it is known and a slash command waiting for the runs ahead of it never starts;
   * then those queued are withdrawn and the running one interrupted.
   */
  async #cancelPrompts(sessionId: string, served: ServedSession): Promise<void> {
    for (const prompt of served.prompts) {
      prompt.cancelRequested = true;
      prompt.onCancel?.();
    }
    await this.#stop(sessionId, [...served.prompts]);
  }

  /**
   * Withdraws the prompts still queued first (interrupting the running run first would start the
   * next queued one), then interrupts the runs of those that started. Another host's queued turns
   * are left alone.
   */
  async #stop(sessionId: string, prompts: readonly ServedPrompt[]): Promise<void> {
    const running = new Set<string>();
    for (const prompt of prompts) {
      if (prompt.inputId !== null && (await this.#withdraw(sessionId, prompt.inputId))) continue;
      if (prompt.runId !== null) running.add(prompt.runId);
    }
    for (const runId of running) await this.#interrupt(sessionId, runId);
  }

  /** True when the queued input was withdrawn; false when it had started (or ended) already. */
  async #withdraw(sessionId: string, inputId: string): Promise<boolean> {
    try {
      await this.#host.cancelQueuedInput({ sessionId, inputId });
      return true;
    } catch (error) {
      const code = toAgentError(error).code;
      if (code !== 'input_not_queued') this.#log.info('withdraw refused', { sessionId, inputId, code });
      return false;
    }
  }

  async setMode(sessionId: string, modeId: string): Promise<void> {
    const mode = PermissionMode.safeParse(modeId);
    if (!mode.success)
      throw invalidRequest(`Unknown mode "${modeId}"; use one of ${PermissionMode.options.join(', ')}.`);
    // As a prompt: only a session made, loaded or resumed here, in its folder.
    this.#served(sessionId);
    try {
      await this.#host.setPermissionMode({ sessionId, mode: mode.data });
    } catch (error) {
      // A mode the running agent cannot enter live applies by restarting it, which only an idle session allows.
      if (!AgentError.isInstance(error) || error.code !== 'requires_restart') throw error;
      const snapshot = await this.#host.getSession(sessionId);
      if (snapshot.activeRunId !== null) {
        throw new AgentError({
          code: 'requires_restart',
          message: `The mode ${mode.data} restarts the agent, which cannot happen during a turn; set it again once the turn ends.`,
        });
      }
      await this.#host.setPermissionMode({ sessionId, mode: mode.data, restart: true });
    }
  }

  async setConfigOption(request: SetSessionConfigOptionRequest): Promise<SessionConfigOption[]> {
    const { sessionId, configId, value } = request;
    if (configId !== modeOptionId && configId !== modelOptionId)
      throw invalidRequest(`Unknown config option "${configId}"; use ${modeOptionId} or ${modelOptionId}.`);
    if (typeof value !== 'string')
      throw invalidRequest(`The option ${configId} takes the id of one of its values (a string), not ${typeof value}.`);
    this.#served(sessionId);
    if (configId === modeOptionId) await this.setMode(sessionId, value);
    else await this.#setModel(sessionId, value);
    this.#modelList();
    return this.#configOptions(await this.#host.getSession(sessionId));
  }

  /** The session was closed (by this client or another host) after the request began. */
  async #closedMeanwhile(sessionId: string): Promise<boolean> {
    try {
      return (await this.#host.getSession(sessionId)).state === 'closed';
    } catch {
      return false;
    }
  }

  /**
   * The model set as this connection chose it. The choice is noted first: the config_option_update the
   * change sets off may be sent before the set answers, and it must already read the value chosen (which
   * counts only once it is the model in effect). A refused set leaves the choice as it was.
   */
  async #setModel(sessionId: string, model: string): Promise<void> {
    const served = this.#sessions.get(sessionId);
    const previous = served?.chosenModel;
    const choosing = { value: model, resolved: null };
    if (served) served.chosenModel = choosing;
    try {
      const { model: resolved } = await this.#host.setModel({ sessionId, model });
      if (served?.chosenModel === choosing) served.chosenModel = { value: model, resolved };
    } catch (error) {
      if (served?.chosenModel === choosing) {
        // Never back to a choice still under way (its answer was dropped for this one): it would read as
        // chosen whatever the model became.
        if (previous === undefined || previous.resolved === null) delete served.chosenModel;
        else served.chosenModel = previous;
        // An update sent while this set was under way showed the refused value.
        void this.#announceSettings(sessionId);
      }
      throw error;
    }
  }

  /**
   * The client went away: deny what it was asked, stop the runs it was waiting for (unless they
   * outlive the client: a daemon's), stop following.
   * The sessions stay open in Tether, and so do their MCP files: the agent reads them again at its
   * next launch (another client, the web UI, a later `tether acp`); they go when the session closes.
   */
  async dispose(): Promise<void> {
    this.#closed = true;
    // The model list is not waited for: it belongs to the host, whose shutdown ends a listing agent at once.
    await Promise.allSettled([...this.#answering]);
    await Promise.allSettled(
      [...this.#sessions].map(async ([sessionId, served]) => {
        // As a cancel: a slash command still waiting for the run ahead of it would otherwise start once that
        // run ends, for no one.
        if (!this.#runsOutliveClient) await this.#cancelPrompts(sessionId, served);
        served.follower.stop();
      }),
    );
    this.#sessions.clear();
  }

  /** The session, reopened if closed, once the client's cwd is known to be its folder (refused before anything changes). */
  async #openForClient(sessionId: string, cwd: string): Promise<SessionSnapshot> {
    const directory = clientDirectory(cwd);
    const snapshot = await this.#host.getSession(sessionId);
    await requireSessionDirectory(snapshot, directory);
    if (snapshot.state !== 'closed') return snapshot;
    await this.#host.openSession({ continueSession: sessionId, startAgent: true });
    return this.#host.getSession(sessionId);
  }

  #served(sessionId: string): ServedSession {
    const served = this.#sessions.get(sessionId);
    if (!served) throw notServedError(sessionId);
    // A turn nobody could follow would never be answered: refuse it before it starts.
    if (served.follower.failure) throw served.follower.failure;
    return served;
  }

  #serve(
    snapshot: SessionSnapshot,
    options: { replay: boolean; fromOpening?: boolean; mcpConfiguration: McpConfigurationFile | null },
  ): ServedSession {
    const { sessionId } = snapshot;
    const previous = this.#sessions.get(sessionId);
    if (previous) {
      // Served here already (a load again): its prompts go on, waiting on the new follower (#runEnd).
      const follower = this.#follow(snapshot, options, () => void this.#release(sessionId, previous));
      previous.follower.stop();
      follower.continueFrom(previous.follower);
      previous.follower = follower;
      return previous;
    }
    const served: ServedSession = {
      follower: this.#follow(snapshot, options, () => void this.#release(sessionId, served)),
      prompts: new Set(),
      mcpConfiguration: options.mcpConfiguration,
    };
    this.#sessions.set(sessionId, served);
    return served;
  }

  /** Follows the session for this connection: the whole log replayed first, or live from its opening or from the snapshot on. */
  #follow(
    snapshot: SessionSnapshot,
    { replay, fromOpening = false }: { replay: boolean; fromOpening?: boolean },
    onClosed: () => void,
  ): SessionFollower {
    const { sessionId } = snapshot;
    return new SessionFollower(
      {
        host: this.#host,
        sessionId,
        directory: sessionDirectory(snapshot),
        afterSeq: replay || fromOpening ? 0 : snapshot.lastSeq,
        knownUntil: fromOpening ? snapshot.lastSeq : 0,
        titled: replay ? false : snapshot.title !== null,
        pendingAtStart: replay
          ? []
          : snapshot.pendingInteractions.filter((interaction) => interaction.status === 'pending'),
        notify: (update) => this.#notify(sessionId, update),
        onSettingsChanged: () => void this.#announceSettings(sessionId),
        onAgentStarted: () => this.#modelList(),
        onClosed,
        ask: (interaction) => this.#ask(sessionId, interaction),
        onError: (error) => this.#log.error('session follow failed', { sessionId, code: error.code }),
      },
      replay ? snapshot.lastSeq : 0,
    );
  }

  /**
   * The commands, once the response that tells the client about the session is on its way: called
   * as a handler's last step, so the SDK queues the response (in this turn's microtasks) before it.
   */
  #announceCommandsAfterResponse(sessionId: string): void {
    setImmediate(() => {
      void this.#notify(sessionId, {
        sessionUpdate: 'available_commands_update',
        availableCommands: availableCommands(),
      });
    });
  }

  /** Stops following a closed session and removes its MCP file; once, however many ways the close is seen. */
  #release(sessionId: string, served: ServedSession): Promise<void> {
    served.follower.stop();
    if (this.#sessions.get(sessionId) === served) this.#sessions.delete(sessionId);
    if (!served.released) this.#log.info('session released', { sessionId });
    served.released ??= served.mcpConfiguration?.remove() ?? Promise.resolve();
    return served.released;
  }

  async #interrupt(sessionId: string, runId: string): Promise<void> {
    try {
      await this.#host.interruptRun({ sessionId, runId });
    } catch (error) {
      this.#log.info('interrupt refused', { sessionId, runId, code: toAgentError(error).code });
    }
  }

  async #notify(sessionId: string, update: SessionUpdate): Promise<void> {
    if (this.#closed || !this.#client) return;
    try {
      await this.#client.notify(methods.client.session.update, { sessionId, update });
    } catch {
      // The connection closed under the notification: dispose() handles the rest.
    }
  }

  /** The options as known now: while the model list is being read, the model option holds the model in effect and the default. */
  #configOptions(snapshot: SessionSnapshot): SessionConfigOption[] {
    return configOptions(
      snapshot,
      this.#knownModels ?? null,
      this.#capabilities?.setModel === true,
      this.#sessions.get(snapshot.sessionId)?.chosenModel ?? null,
    );
  }

  /** The options a session's answer carries; announced again once the model list arrives, if it had to go without it. */
  #optionsForAnswer(snapshot: SessionSnapshot, served: ServedSession): SessionConfigOption[] {
    const options = this.#configOptions(snapshot);
    served.modelOptionPending = this.#knownModels === undefined;
    return options;
  }

  /**
   * The agent's models, asked once per connection, in the background, once a session's agent started
   * (or a session was loaded); none when the agent cannot list them (or fails to: the model is then
   * free text, as without the option).
   */
  #modelList(): void {
    this.#models ??= this.#host
      .providerCapabilities()
      .then((capabilities) => (capabilities.modelList ? this.#host.listModels() : null))
      .catch((error: unknown) => {
        this.#log.info('model list unavailable', { code: toAgentError(error).code });
        return null;
      })
      .then((models) => {
        this.#knownModels = models;
        this.#announceModelOption();
        return models;
      });
  }

  /** The sessions answered before the list was read get the whole list: after their answer, which is already queued. */
  #announceModelOption(): void {
    const listed = (this.#knownModels?.models.length ?? 0) > 0;
    for (const [sessionId, served] of this.#sessions) {
      if (!served.modelOptionPending) continue;
      served.modelOptionPending = false;
      if (listed) setImmediate(() => void this.#announceSettings(sessionId));
    }
  }

  async #announceSettings(sessionId: string): Promise<void> {
    try {
      const options = this.#configOptions(await this.#host.getSession(sessionId));
      await this.#notify(sessionId, { sessionUpdate: 'config_option_update', configOptions: options });
    } catch (error) {
      this.#log.info('config options unavailable', { sessionId, code: toAgentError(error).code });
    }
  }

  /** Asks the client about an interaction and gives Tether its answer; whichever host answers first wins. */
  #ask(sessionId: string, interaction: OpenInteraction): void {
    const answering = this.#askClient(sessionId, interaction)
      .then(async (answer) => {
        if (answer === null || interaction.signal.aborted) return;
        await this.#host.respondInteraction({ sessionId, interactionRef: interaction.interactionRef, answer });
      })
      .catch((error: unknown) => {
        const { code } = toAgentError(error);
        if (!settledElsewhere.has(code)) this.#log.error('answer not delivered', { sessionId, code });
      })
      .finally(() => this.#answering.delete(answering));
    this.#answering.add(answering);
  }

  /** The client's answer; null when the interaction ended elsewhere first. A client that fails or vanishes denies. */
  async #askClient(sessionId: string, interaction: OpenInteraction): Promise<InteractionAnswer | null> {
    const client = this.#client;
    const { request, signal } = interaction;
    const options = { cancellationSignal: signal, stopWaitingOnCancel: true };
    try {
      if (!client) throw new Error('no client');
      if (request.kind === 'approval') {
        const response = await client.request(
          methods.client.session.requestPermission,
          permissionRequestOf(sessionId, request),
          options,
        );
        return approvalAnswerOf(request, response.outcome);
      }
      if (!this.#clientCapabilities.elicitation?.form) return questionsUnsupportedAnswer;
      const response = await client.request(
        methods.client.elicitation.create,
        questionElicitationOf(sessionId, request),
        options,
      );
      return questionAnswerOf(request, response);
    } catch {
      if (signal.aborted) return null;
      return request.kind === 'approval'
        ? { decision: 'deny', message: 'The user could not be asked (their editor did not answer).' }
        : { decision: 'decline', message: 'The user could not be asked (their editor did not answer).' };
    }
  }
}
