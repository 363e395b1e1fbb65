import { randomUUID } from 'node:crypto';
import {
  AgentError,
  type ContextUsage,
  type InteractionAnswer,
  type PermissionMode,
  type SessionConfiguration,
  toAgentError,
} from '@tether/protocol';
import type {
  AgentProviderV1Control,
  AgentProviderV1FileRewind,
  AgentProviderV1InputPart,
  AgentProviderV1Session,
  AgentProviderV1StopOptions,
  AgentProviderV1StopReason,
  AgentProviderV1Turn,
} from '@tether/provider-spec';
import { type ClaudeConnection, userMessage } from '../connection/claude-connection.js';
import type { ActiveTurn } from '../translate/translator-state.js';
import { AgentOutput } from './agent-output.js';
import {
  requestContextUsage,
  requestModel,
  requestPermissionMode,
  requestSessionCost,
  requiresRestart,
} from './control-requests.js';
import { cannotRewind, rewindFiles } from './file-rewind.js';
import { interruptUnanswered, requestInterrupt } from './interrupt-request.js';
import { bypassRefusal } from '../classify/classify-run-end.js';
import { launchEnvironment } from './launch-plan.js';
import { modelAtLaunch } from './model-at-launch.js';
import { closingMessage, missingWorkspace, sessionClosed, turnActive } from './session-errors.js';
import { steerRefused, withdrawSteer } from './steer-requests.js';

/**
 * One Claude conversation. Its agent (a connection over the session's transport) starts with the
 * first turn (the user line is written at spawn, without waiting for initialize), or ahead of it
 * (doStart: no line written until the turn), and can end without
 * the conversation ending — a crash, an idle release, a runtime shutdown — after which the next turn
 * starts a new one with --resume. A session opened with copyConversation starts its first agent as a
 * copy of that conversation under its own new id, and resumes its own from then on. The agent's
 * lifecycle is AgentLifecycle's, its output AgentOutput's; the turns and requests are here.
 */
export class ClaudeSession extends AgentOutput implements AgentProviderV1Session {
  /** Ends what the session reads or waits for beside its agent (a model list, the spare its opening takes) when it stops. */
  private readonly reads = new AbortController();
  /**
   * The model changes waiting for the model list (modelAtLaunch): they give up on it as the session
   * stops (the read, which others may share, is the provider's and ends with it).
   */
  private readonly modelReads = new Set<Promise<string>>();

  // ---- turns and controls ----------------------------------------------------------------

  async doTurn(turn: AgentProviderV1Turn, control?: string): Promise<void> {
    if (this.stopped) throw sessionClosed();
    if (this.state.turn) throw turnActive();
    // An agent already running is not started again, which checks: its tools would fail in a folder that is gone.
    const missing = missingWorkspace(this.options.workspace.path);
    if (missing) throw missing;
    this.unacknowledged = { turn, control, retried: false };
    await this.send(turn, control);
  }

  async doControl(control: AgentProviderV1Control): Promise<void> {
    if (control.name === 'model' && control.argument !== undefined)
      return this.modelControl(control.runId, control.argument);
    // Slash commands are user lines the CLI recognises; the turn is marked so its result completes the control.
    const text = `/${control.name}${control.argument === undefined ? '' : ` ${control.argument}`}`;
    await this.doTurn({ runId: control.runId, input: [{ type: 'text', text }] }, control.name);
  }

  /**
   * The model control is set_model: the CLI's `/model` changed only its running process (a session
   * opened with a model went back to it at its next launch, and the session's record kept the old
   * one), and took any name, which the next request then failed with. Checked and applied as a
   * set_model is, then recorded as the host's choice.
   */
  private async modelControl(runId: string, argument: string): Promise<void> {
    try {
      const model = await this.doSetModel(argument);
      this.emit({ type: 'session.model_changed', model, source: 'command' });
      this.emit({
        type: 'control.completed',
        runId,
        name: 'model',
        status: 'succeeded',
        output: `Set model to ${model}.`,
      });
      this.emit({ type: 'run.completed', runId, outcome: 'succeeded' });
    } catch (error) {
      const failure = toAgentError(error).toObject();
      this.emit({ type: 'control.completed', runId, name: 'model', status: 'failed', output: failure.message });
      this.emit({ type: 'run.completed', runId, outcome: 'failed', error: failure });
    }
  }

  protected async send(turn: AgentProviderV1Turn, control?: string): Promise<void> {
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
    this.contextMeasurement.cancel();
    let connection: ClaudeConnection | null;
    try {
      // An agent being let go takes no turn: once it has ended, the turn starts a new one (resuming
      // the conversation) through the pool, queued like any other when no slot is free.
      if (this.releasing) {
        await this.releaseEnded();
        if (this.stopped || this.state.turn !== active) return;
      }
      connection = this.connection ?? (await this.startConnection(turn.runId));
      // It waited for a slot: a file it refers to may have gone meanwhile, and would reach the agent as an empty mention.
      if (this.queuedRun === turn.runId) {
        this.queuedRun = null;
        if (connection && this.state.turn === active) await turn.recheckInput?.();
      }
    } catch (error) {
      // Nothing was started (e.g. the binary is too old), or the input was refused once a slot was
      // free: the turn is not in flight; its run fails with the error.
      if (this.state.turn === active) {
        this.state.turn = null;
        this.unacknowledged = null;
        // The agent started for it all the same: idle now, as after any turn.
        if (this.connection) this.afterTurn(active);
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
    // Steers sent before the agent started, or to one that died before taking the turn, go with it.
    for (const message of this.steered.pendingMessages(turn.runId)) connection.send(message);
  }

  // ---- follow-ups steered into the running turn ------------------------------------------

  async doSteer(steer: { runId: string; inputId: string; input: readonly AgentProviderV1InputPart[] }): Promise<void> {
    if (this.stopped) throw sessionClosed();
    const turn = this.state.turn;
    const connection = this.liveConnection;
    if (!turn || turn.runId !== steer.runId) throw steerRefused('run_not_active');
    // A slash command's result completes its control: nothing may ride along with it.
    if (turn.control !== undefined) throw steerRefused('control_run');
    if (turn.interruptRequested || turn.failure) throw steerRefused('run_ending');
    const uuid = randomUUID();
    // next: folded next to a running tool's result, else run right after the text being written.
    const message = { ...userMessage(steer.input, uuid), priority: 'next' as const };
    this.steered.add({ inputId: steer.inputId, runId: steer.runId, uuid, message });
    // The turn still waits for its agent: the line is written right after the turn's own (send).
    if (!connection) return;
    if (!connection.send(message)) {
      this.steered.forget(uuid);
      throw steerRefused('agent_not_reading');
    }
    this.watchdog.touch();
  }

  async doWithdrawSteer({ inputId }: { inputId: string }): Promise<{ withdrawn: boolean }> {
    const uuid = this.steered.uuidOf(inputId);
    if (uuid === undefined) return { withdrawn: false };
    return { withdrawn: await this.takeBackSteer(uuid, 'withdrawn') };
  }

  /** Asks the agent to drop a steered line it has not taken in; true when it did (its cancellation emitted). */
  private async takeBackSteer(uuid: string, reason: 'withdrawn' | 'interrupted'): Promise<boolean> {
    const connection = this.liveConnection;
    this.steered.markWithdrawing(uuid, reason);
    if (!connection) {
      // No agent holds it (the turn waits for one, a slot or a start): it would go with the turn's
      // own line, so it is dropped here.
      const part = this.steered.withdrawn(uuid, true);
      if (part) this.emit(part);
      this.settleContinuation();
      return true;
    }
    let dropped = false;
    try {
      dropped = await withdrawSteer(connection, uuid);
    } finally {
      const part = this.steered.withdrawn(uuid, dropped);
      if (part) this.emit(part);
      this.settleContinuation();
    }
    return dropped;
  }

  // ---- stop, interrupt, answers, modes, queries -------------------------------------------

  async doStop(reason: AgentProviderV1StopReason, options: AgentProviderV1StopOptions = {}): Promise<void> {
    this.stopped = true;
    this.idleRelease.cancel();
    this.contextMeasurement.cancel();
    this.watchdog.stop();
    this.startupWatchdog.cancel();
    // Nothing is left waiting and nothing is allowed on the way out.
    this.prompts.denyAll(this.answerWriter(), closingMessage);
    this.reads.abort();
    // The opening's take of a spare ends with the abort above, or lets the spare it got go (doOpened).
    await this.openingClaim;
    await Promise.all([
      this.stopConnection(reason === 'close' ? 'closed' : 'released', options.force === true),
      ...this.modelReads,
    ]);
    await this.sweeping;
    this.settings.pool.unregister(this);
  }

  doInterrupt({ runId }: { runId: string }): Promise<{ applied: boolean }> {
    const turn = this.state.turn;
    if (!turn || turn.runId !== runId) return Promise.resolve({ applied: false });
    if (this.interrupting?.runId === runId) return this.interrupting.done;
    // Provisional until the receipt: a result arriving first is held until then (onFrame), and a
    // stop that fails or is refused leaves the run the outcome its own result gives.
    turn.interruptRequested = true;
    const connection = this.liveConnection;
    if (!connection) {
      // Waiting for a process slot or for the end of one being let go (or none started): the run ends here, nothing reached the CLI.
      this.endTurn(turn, { outcome: 'interrupted' });
      this.withdrawSlotWait(runId);
      return Promise.resolve({ applied: true });
    }
    return this.sendStop(turn, connection);
  }

  /** The stop answered before the CLI took the turn, sent again now that the turn runs (requestInterrupt). */
  protected stopAgain(turn: ActiveTurn): void {
    const connection = this.liveConnection;
    if (!connection || this.state.turn !== turn) return;
    // The caller already has its receipt: what this one says only decides the run's end (held results, a hung agent).
    this.sendStop(turn, connection).catch(() => undefined);
  }

  /** Writes the stop and reads its receipt; the stop under way is the one a second caller, and the held results, wait for. */
  private sendStop(turn: ActiveTurn, connection: ClaudeConnection): Promise<{ applied: boolean }> {
    const firstTurnOfProcess = !this.state.turnStartedOnProcess;
    const done = requestInterrupt(
      connection,
      turn,
      {
        onCancelledBeforeStart: () => {
          if (this.state.turn === turn) this.endTurn(turn, { outcome: 'interrupted' });
        },
        onTurnNotReached: () => this.stopOnceStarted(turn),
      },
      { firstTurnOfProcess, timeoutMs: this.settings.interruptTimeoutMs },
    )
      .catch(async (error: unknown) => {
        // No receipt at all: the agent no longer reads its input (hung, stopped), so no stop can reach it.
        if (interruptUnanswered(error) && this.state.turn === turn && this.connection === connection)
          return this.abandonHungAgent(turn);
        const stillQueued = AgentError.isInstance(error) && error.details?.reason === 'input_still_queued';
        // The agent died while the stop was out: its end ended the run (onEnd), nothing is left to stop.
        if (!stillQueued && (await this.endReported(connection)) && this.state.turn !== turn) return { applied: false };
        turn.interruptRequested = false;
        if (stillQueued) this.note('claude.interrupt_input_still_queued');
        throw error;
      })
      .finally(() => {
        if (this.interrupting?.done === done) this.interrupting = null;
      });
    this.interrupting = { runId: turn.runId, done };
    return done;
  }

  /**
   * The stop was asked and the agent never answered: it is killed at once (its group, tools included),
   * and the run ends interrupted as asked. Let go first, so nothing (a turn, the pool) reaches it meanwhile.
   */
  private abandonHungAgent(turn: ActiveTurn): { applied: boolean } {
    this.note('claude.interrupt_unanswered');
    void this.letGo('released', true);
    this.endTurn(turn, { outcome: 'interrupted' });
    return { applied: true };
  }

  async doRespond({ interactionRef, answer }: { interactionRef: string; answer: InteractionAnswer }): Promise<void> {
    // A deny that also stops the run: the CLI runs a steered line it still holds right after the
    // aborted tool, in the same turn, and the run went on. They are taken back first (interrupted).
    const runId = this.prompts.runOf(interactionRef);
    if (answer.decision === 'deny' && answer.interrupt === true && runId !== undefined)
      for (const uuid of this.steered.pendingOf(runId))
        await this.takeBackSteer(uuid, 'interrupted').catch(() => false);
    // Awaited only when delivery is known once written: the agent's next output must not overtake the answer's record.
    const delivery = this.prompts.respond(interactionRef, answer, this.answerWriter());
    if (delivery) await delivery;
    this.watchdog.touch();
  }

  requiresRestartFor(mode: PermissionMode): boolean {
    // The CLI refuses to enter bypass mode live unless it was launched in it.
    return (
      (this.liveConnection !== null || this.starting !== null) && mode === 'bypass' && this.launchedMode !== 'bypass'
    );
  }

  /**
   * A mode its agent would refuse to launch in (at a new session's opening, or asked for later): refused
   * before anything is recorded.
   */
  refuseUnlaunchableMode(mode: PermissionMode | undefined = this.configuration.permissionMode): void {
    if (mode !== 'bypass') return;
    const refused = bypassRefusal(launchEnvironment(this.settings, this.configuration));
    if (refused) throw refused;
  }

  async doSetPermissionMode(mode: PermissionMode): Promise<PermissionMode> {
    this.refuseUnlaunchableMode(mode);
    if (this.requiresRestartFor(mode)) throw requiresRestart(mode);
    return this.changeConfiguration({ permissionMode: mode }, () =>
      this.applyToAgent(mode, (agent) => requestPermissionMode(agent, mode)),
    );
  }

  /**
   * Sets what the next launch uses, then `apply` (to the running agent, or for the next launch); each
   * field it changed is put back when that fails, unless another change set it meanwhile: a refused
   * change changes nothing (the agent refused it, or died as it was asked, and the next launch would
   * have taken it anyway), and a change made beside it (a model and a mode at once) stays.
   */
  private async changeConfiguration<Result>(
    change: Partial<SessionConfiguration>,
    apply: () => Promise<Result>,
  ): Promise<Result> {
    const previous = this.configuration;
    this.configuration = { ...previous, ...change };
    try {
      return await apply();
    } catch (error) {
      const restored: Record<string, unknown> = { ...this.configuration };
      for (const [field, value] of Object.entries(change))
        if (restored[field] === value) restored[field] = previous[field as keyof SessionConfiguration];
      this.configuration = restored as SessionConfiguration;
      throw error;
    }
  }

  /**
   * A setting (already in the configuration the next launch uses) sent to the running or starting
   * agent too; with none (`withoutAgent` says what it will be), or one that turns out to have refused
   * its launch, it applies from the next launch.
   */
  private async applyToAgent<T>(
    value: T,
    request: (agent: ClaudeConnection) => Promise<T>,
    withoutAgent: () => T | Promise<T> = () => value,
  ): Promise<T> {
    const agent = await this.currentAgent();
    if (!agent) return withoutAgent();
    try {
      return await request(agent);
    } catch (error) {
      if (await this.refusalBehind(agent)) return value;
      throw error;
    }
  }

  /**
   * The session's opening is recorded: the spare that can serve it, ready or still starting, is taken
   * now (a parked one claimed for its folder), so that its first turn, typed some time later, finds
   * its agent claimed and waits for nothing (a claim is ~40 ms of the agent's work). Nothing is
   * started when there is none. A refused claim is told (a diagnostic) and the first turn starts
   * cold, as when the claim travels with the turn.
   */
  doOpened(): void {
    const warmPool = this.settings.warmPool;
    if (!warmPool || this.stopped || this.connection || this.starting || this.state.turn || this.openingClaim) return;
    const key = this.spareKey();
    if (key === null) return;
    const onSkipped = (code: string): void => {
      this.spareSkipped = true;
      this.note(code);
    };
    const claim = warmPool
      .take(key, { onSkipped, signal: this.reads.signal })
      .then(async (spare) => {
        if (!spare) return;
        // Closed meanwhile: the spare is let go, not left running.
        if (this.stopped || this.connection) return spare.member.release();
        this.adopt(spare, key);
        // Claimed for a turn that may not come: released like any idle agent if none does.
        this.idleAfterRequest();
      })
      // A head start only: whatever went wrong, the first turn starts its agent as without it.
      .catch(() => undefined);
    const settled = claim.finally(() => {
      if (this.openingClaim === settled) this.openingClaim = null;
    });
    this.openingClaim = settled;
  }

  async doStart(): Promise<void> {
    await this.runningConnection();
    // Started for a turn that may not come: released like any idle agent if none does.
    this.idleAfterRequest();
  }

  async doSetModel(model: string): Promise<string> {
    return this.changeConfiguration({ model }, () => {
      const environment = launchEnvironment(this.settings, this.configuration);
      return this.applyToAgent(
        model,
        async (agent) => {
          const answered = await requestModel(agent, model);
          // The session shows the answer now; the next init corrects it when the agent runs another model
          // (the SDK answers an alias its list lacks, such as "best", as given).
          this.state.reportedModel = answered;
          // Unless that init is of a turn taken in before the answer: it runs on the model it was taken in on.
          const turn = this.state.turn;
          if (turn !== null && turn.initSeen !== true) turn.modelSetBeforeInit = answered;
          return answered;
        },
        () => this.modelOfNextLaunch(model, environment),
      );
    });
  }

  /**
   * With no agent running, the model the next one will use (what a running one answers): an alias
   * resolved through the agent's model list. After a refused launch, the name as given: nothing is
   * started for a session whose agent cannot start.
   */
  private async modelOfNextLaunch(model: string, environment: Record<string, string>): Promise<string> {
    if (this.refusedStart !== null || this.stopped) return model;
    const read = modelAtLaunch(model, this.settings, environment, this.reads.signal);
    this.modelReads.add(read);
    try {
      return await read;
    } finally {
      this.modelReads.delete(read);
    }
  }

  async doGetContextUsage(): Promise<ContextUsage> {
    return this.askRunningAgent(requestContextUsage);
  }

  async doGetSessionCost(): Promise<{ report: string }> {
    return this.askRunningAgent(requestSessionCost);
  }

  async doRewindFiles(request: { inputMessageId: string; dryRun: boolean }): Promise<AgentProviderV1FileRewind> {
    if (this.stopped) throw sessionClosed();
    // The turn's own edits would race the restore.
    if (this.state.turn) throw turnActive();
    // A conversation that holds no turn yet (none begun, none to copy: e.g. rewound to before its
    // first turn) keeps no checkpoint of any: no agent is started just to say so.
    if (this.startsNewConversation()) return cannotRewind('no_checkpoint');
    // Asked even with fileCheckpointing false: the agent itself says whether it keeps checkpoints.
    // With none running, the one started resumes the conversation: the session's own, which the
    // next turn uses (or the idle release ends), as after a turn.
    return this.askRunningAgent((connection) => rewindFiles(connection, request));
  }
}
