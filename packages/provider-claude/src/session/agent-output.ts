import { randomUUID } from 'node:crypto';
import { type SerializedAgentError, toAgentError } from '@tether/protocol';
import type { AgentProviderV1Part, AgentProviderV1Turn } from '@tether/provider-spec';
import { classifyRunEnd, startupRefusal } from '../classify/classify-run-end.js';
import { type ClaudeConnection, type ConnectionEnding, processExitOf } from '../connection/claude-connection.js';
import { toRunEnding } from '../connection/connection-ending.js';
import type { CliFrame } from '../frames/cli-frame-schemas.js';
import { readProcessStatus } from '../process/proc-filesystem.js';
import { checkpointOf } from '../translate/checkpoint.js';
import { beginsTurnOfItsOwn, revealsUnstampedProducer, turnOfItsOwn } from '../translate/correlation.js';
import { streamedRunUsage } from '../translate/run-usage.js';
import { translateFrame } from '../translate/translate-frame.js';
import type { ActiveTurn } from '../translate/translator-state.js';
import { acknowledgesInput } from './acknowledgement.js';
import type { ClaimRefusal } from './spare-claim.js';
import { AgentLifecycle } from './agent-lifecycle.js';
import { requestInterrupt } from './interrupt-request.js';
import { OneShotTimer } from './one-shot-timer.js';
import { endingAfterReceipt, failedEnding, holdEnding } from './run-ending.js';
import { inputClosedError, stalledError, unstampedError } from './session-errors.js';
import { SessionReports } from './session-reports.js';
import { SteeredInputs } from './steered-inputs.js';

/** How long an agent whose input failed may take to exit on its own before it counts as no longer reading. */
const inputClosedGraceMs = 1_000;

/**
 * How long after a run's end the context is measured, unless a turn starts first (then it is
 * measured after that one): the CLI works out its answer before it reads a line written after the
 * request, so a turn sent right after the end waited for it (a few ms; up to ~150 ms on a busy 2-core machine).
 */
const contextMeasurementDelayMs = 500;

/**
 * What a Claude session does with what its agent says and how its turns end: frames translated
 * and emitted (a run we fail, or whose stop awaits its receipt, ends as we decide), the
 * watchdogs' verdicts, broken input, and the agent's end (a turn it never saw is sent again).
 */
export abstract class AgentOutput extends AgentLifecycle {
  /** Follow-ups written into the running turn (doSteer) that the agent has not taken yet. */
  protected readonly steered = new SteeredInputs();
  /** A run's ending held while it goes on as the turn of an input steered into it (continueForSteers). */
  protected heldCompletion: AgentProviderV1Part[] | null = null;
  protected readonly reports = new SessionReports({
    emit: (part) => this.emit(part),
    // Nothing is asked of an agent exiting after it refused its launch.
    current: () => (this.stopped || this.refusedItsStart(this.connection) ? null : this.connection),
  });
  /** A turn whose stop the CLI answered before it took the turn: stopped again once it starts (requestInterrupt). */
  protected stopWhenStarted: ActiveTurn | null = null;
  protected readonly contextMeasurement = new OneShotTimer({
    delayMs: contextMeasurementDelayMs,
    onFire: () => {
      if (this.state.turn === null) this.reports.measureContext();
    },
  });

  // ---- output ----------------------------------------------------------------------------

  /**
   * Every part goes out through here: a run's steered inputs that never reached the model end before
   * its run.completed, its cost counts toward the budget, and the context is measured a moment after it.
   */
  protected emitPart(part: AgentProviderV1Part, emit: (part: AgentProviderV1Part) => void): void {
    // A run going on for a steer has one checkpoint, its last (which names the run's own input);
    // the held one of an earlier turn goes out only if the run ends without a later one.
    if (part.type === 'run.checkpointed' && this.heldCompletion)
      this.heldCompletion = this.heldCompletion.filter((held) => held.type !== 'run.checkpointed');
    if (part.type === 'run.completed') {
      for (const held of this.heldCompletion ?? [])
        if (held.type === 'run.checkpointed' && held.runId === part.runId) emit(held);
      part = withHeldFailure(part, this.heldCompletion);
      for (const cancelled of this.steered.endRun(part.runId, part.outcome, part.error)) emit(cancelled);
      this.heldCompletion = null;
    }
    if (part.type === 'run.usage' && part.costUsd) this.spentCostUsd += part.costUsd;
    emit(part);
    if (part.type === 'run.completed') this.contextMeasurement.schedule();
  }

  protected note(code: string): void {
    if (this.state.notedDiagnostics.has(code)) return;
    this.state.notedDiagnostics.add(code);
    this.emit({
      type: 'diagnostic',
      level: 'warning',
      code,
      ...(this.state.turn ? { runId: this.state.turn.runId } : {}),
    });
  }

  protected onActivity(): void {
    this.lastActivity = Date.now();
    if (this.state.turn) this.watchdog.touch(this.lastActivity);
  }

  protected onStarted(): void {
    this.connectionStarted = true;
    this.startupWatchdog.cancel();
  }

  protected onFrame(frame: CliFrame): void {
    this.onStarted();
    this.onActivity();
    // At the first frame, not once the model streams: asked then, the answer could come after the
    // run's end (or never, for a session closed right after a short turn), so when the limits are
    // reported would be a race. The CLI answers it before the turn's API request (a few ms).
    if (this.connection) this.reports.askLimits(this.connection);
    // The agent refused its launch and exits: known before the run's end is emitted, so that nothing
    // asked after that end goes to it (currentAgent, runningConnection).
    if (frame.kind === 'result' && this.connection) {
      const refusal = startupRefusal(frame.frame);
      if (refusal) this.refuseStart(this.connection, refusal);
    }
    if (frame.kind === 'rate_limit_event') this.reports.onRateLimitEvent(frame.frame);
    if (frame.kind === 'result') this.conversationKept = true;
    const steerParts = this.steered.onFrame(frame, this.interrupting !== null);
    for (const part of steerParts) this.emit(part);
    if (beginsTurnOfItsOwn(this.state, frame)) {
      // A turn of ours written just before waits for the CLI's own, whose output has no run then.
      if (this.state.turn === null) this.beginTurnOfItsOwn();
      else this.note('claude.agent_turn_not_recorded');
    }
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
      for (const part of failedEnding(parts, turn.runId, failure)) this.emit(part);
    } else if (turn && pendingStop) {
      const { now, held } = holdEnding(parts, turn.runId);
      for (const part of now) this.emit(part);
      if (held.length > 0) void this.afterReceipt(pendingStop, held);
    } else {
      for (const part of this.continueForSteers(turn, parts)) this.emit(part);
    }
    // The turn a stop missed has started: the stop goes again, before the model call gets far.
    if (turn && this.stopWhenStarted === turn && turn.started && this.state.turn === turn) {
      this.stopWhenStarted = null;
      this.stopAgain(turn);
    }
    // What the message streamed is complete: stored and published now, not a coalescing window later
    // (a short turn's result comes 3-9 ms after, a stop's 1-3 ms).
    if (frame.kind === 'stream_event' && frame.frame.event.type === 'message_stop') this.options.messageEnded?.();
    if (turn && this.state.turn === null) this.afterTurn(turn);
    // Between turns (e.g. the last background task ended): the process may have just become releasable.
    else if (this.state.turn === null) this.settings.pool.offerIdle();
    if (steerParts.some((part) => part.type === 'input.cancelled')) this.settleContinuation();
  }

  /**
   * The CLI began a turn by itself (a background task finished): the runtime records a run for it, and
   * its frames are that run's. Without one (the session has another run coming), they are dropped as
   * before, with a diagnostic.
   */
  protected beginTurnOfItsOwn(): void {
    const runId = this.options.agentStartedTurn?.() ?? null;
    if (runId === null) return;
    this.state.turn = turnOfItsOwn(runId);
    this.state.turnStartedOnProcess = true;
    // A process at work is not let go, nor asked for its context until the turn ends.
    this.idleRelease.cancel();
    this.contextMeasurement.cancel();
    this.watchdog.touch(this.lastActivity);
  }

  /**
   * A turn ended while inputs steered into its run are still queued in the agent (the CLI runs a
   * follow-up sent while text streams as the next turn): that turn belongs to the same run, which
   * goes on with its frames attributed to the oldest such input. The ending waits for theirs.
   */
  protected continueForSteers(turn: ActiveTurn | null, parts: AgentProviderV1Part[]): AgentProviderV1Part[] {
    if (!turn || this.state.turn !== null || turn.interruptRequested || turn.control !== undefined) return parts;
    const next = this.steered.oldestPending(turn.runId);
    const completed = parts.some((part) => part.type === 'run.completed' && part.runId === turn.runId);
    if (next === undefined || !completed) return parts;
    const ending = parts.filter(
      (part) => (part.type === 'run.completed' || part.type === 'run.checkpointed') && part.runId === turn.runId,
    );
    this.heldCompletion = ending;
    turn.runInputUuid ??= turn.uuid;
    turn.uuid = next;
    turn.started = false;
    turn.toolsRunning = 0;
    turn.requesting = false;
    delete turn.stopReason;
    delete turn.apiError;
    this.state.turn = turn;
    return parts.filter((part) => !ending.includes(part));
  }

  /**
   * A steered input ended without running: a run that went on only for it ends now, as its last
   * turn ended (interrupted when a stop was asked meanwhile), or waits for the next one.
   */
  protected settleContinuation(): void {
    const turn = this.state.turn;
    const held = this.heldCompletion;
    if (!turn || !held || turn.started) return;
    const next = this.steered.oldestPending(turn.runId);
    if (next !== undefined) {
      turn.uuid = next;
      return;
    }
    this.heldCompletion = null;
    this.state.turn = null;
    this.unacknowledged = null;
    for (const part of endingAfterReceipt(turn.interruptRequested, held)) this.emit(part);
    this.afterTurn(turn);
  }

  /** A run's ending held for its stop's receipt: interrupted if the stop was applied, its own outcome otherwise. */
  protected async afterReceipt(receipt: Promise<{ applied: boolean }>, ending: AgentProviderV1Part[]): Promise<void> {
    const applied = await receipt.then(
      (answer) => answer.applied,
      () => false,
    );
    // Nothing is emitted once the session has stopped (the runtime ends the run itself).
    if (this.stopped) return;
    for (const part of endingAfterReceipt(applied, ending)) this.emit(part);
  }

  /** A stop that came before the CLI took `turn`: sent again at once if the turn has started meanwhile, else at its start (onFrame). */
  protected stopOnceStarted(turn: ActiveTurn): void {
    if (this.state.turn !== turn) return;
    if (turn.started) this.stopAgain(turn);
    else this.stopWhenStarted = turn;
  }

  /** Ends the current turn from outside the CLI's own result (interrupted before it started, stalled, crashed). */
  protected endTurn(
    turn: ActiveTurn,
    classification: { outcome: 'succeeded' | 'failed' | 'interrupted'; error?: SerializedAgentError | undefined },
  ): void {
    if (this.state.turn !== turn) return;
    this.state.turn = null;
    this.unacknowledged = null;
    // No result will count what the run used (the agent was stopped hard, or died): its stream's counts do.
    const usage = streamedRunUsage(turn);
    if (usage) this.emit({ type: 'run.usage', runId: turn.runId, ...usage });
    // A stopped turn that answered something is in the transcript up to that answer: a cut point too.
    const checkpoint =
      classification.outcome === 'interrupted' && turn.lastMessageId !== undefined
        ? checkpointOf(this.state, turn)
        : null;
    if (checkpoint) this.emit(checkpoint);
    this.emit({
      type: 'run.completed',
      runId: turn.runId,
      outcome: classification.outcome,
      ...(classification.error ? { error: classification.error } : {}),
    });
    this.afterTurn(turn);
  }

  protected afterTurn(turn: ActiveTurn): void {
    if (this.stopWhenStarted === turn) this.stopWhenStarted = null;
    this.replaceSpare();
    this.prompts.forgetRun(turn.runId, this.answerWriter());
    this.watchdog.stop();
    this.startupWatchdog.cancel();
    if (this.connection) this.scheduleIdleRelease();
    // A session waiting for a process need not wait for the idle timer: this one may be let go now.
    this.settings.pool.offerIdle();
  }

  protected onStall(): void {
    const turn = this.state.turn;
    if (!turn || turn.failure) return;
    // A process held stopped (state T) is why nothing came, not the API.
    const pid = this.connection?.process?.pid;
    const held = pid !== undefined && /^[Tt]$/.test(readProcessStatus(pid)?.state ?? '');
    const failure = stalledError('api', this.settings.stallTimeoutMs, held);
    turn.failure = failure;
    this.note('claude.stall_detected');
    const connection = this.connection;
    if (connection)
      void requestInterrupt(
        connection,
        turn,
        {
          onCancelledBeforeStart: () => this.endTurn(turn, { outcome: 'failed', error: failure }),
          // Only a turn waiting on the API stalls: it has started, so the stop reaches it.
          onTurnNotReached: () => undefined,
        },
        { firstTurnOfProcess: !this.state.turnStartedOnProcess, timeoutMs: this.settings.interruptTimeoutMs },
      ).catch(() => undefined);
    // If the stop does not settle in time, the agent goes; its end fails the run.
    const grace = setTimeout(() => {
      if (this.state.turn === turn) void this.stopConnection('released');
    }, this.settings.stallGraceMs);
    grace.unref();
  }

  /** The agent was handed a turn and wrote nothing: it is killed, the run fails, the next turn starts a new one. */
  protected onStartupTimeout(): void {
    const turn = this.state.turn;
    if (!turn || turn.failure || !this.connection || this.connectionStarted) return;
    turn.failure = stalledError('startup', this.settings.startupTimeoutMs);
    this.note('claude.startup_timeout');
    // The process's end fails the run (onEnd), so no later turn can be written to it meanwhile.
    void this.stopConnection('released');
  }

  /** Reported once per process; the process goes, since a turn nobody can follow would run on unobserved. */
  protected onUnstampedProducer(turn: ActiveTurn): void {
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
  protected onInputFailed(connection: ClaudeConnection | null): void {
    const timer = setTimeout(() => {
      if (connection === null || this.connection !== connection || !connection.running) return;
      const turn = this.state.turn;
      if (turn && !turn.failure) turn.failure = inputClosedError();
      this.note('claude.stdin_closed');
      void this.stopConnection('released');
    }, inputClosedGraceMs);
    timer.unref();
  }

  protected onEnd(ending: ConnectionEnding): void {
    // Let go while idle: a turn present now arrived meanwhile, never reached it, and waits for this end (send).
    const released = this.releasing !== null && this.releasing.connection === this.connection;
    const exit = processExitOf(ending);
    // A refusal of its launch the CLI gave only on stderr (no result frame): later requests get it too (runningConnection).
    if (this.connection && exit && this.stopReason === null && !this.refusedItsStart(this.connection)) {
      const refusal = classifyRunEnd(toRunEnding(exit, this.settings.binaryPath)).error;
      if (refusal?.code === 'provider_configuration_refused') this.refuseStart(this.connection, refusal);
    }
    this.replaceSpare();
    if (this.connection) this.followSweep(this.connection);
    this.connection = null;
    this.startupWatchdog.cancel();
    this.settings.pool.release(this);
    this.idleRelease.cancel();
    this.prompts.clear();
    if (exit) {
      const ended = exit.signal !== null || (exit.exitCode !== null && exit.exitCode !== 0) ? 'crashed' : 'exited';
      this.emit({ type: 'session.process_stopped', reason: this.stopReason ?? ended });
    }
    if (this.state.conversationEstablished && (!this.conversationKept || this.options.ephemeral)) {
      // It ended before it finished a turn, and the CLI writes its transcript behind its frames: there
      // may be nothing to resume, and a resume that finds nothing fails every later turn
      // (resume_not_found). The turn it did not finish is lost either way; the next agent starts the
      // conversation anew (or its copy again). An ephemeral session's agent writes no transcript at
      // all: whenever its process ends (released when idle, a crash), the next one starts anew.
      this.state.conversationEstablished = false;
      this.conversationKept = false;
      this.note('claude.conversation_not_kept');
    }
    if (!this.state.conversationEstablished && this.state.providerSessionId && !this.options.ephemeral) {
      // Nothing was recorded under this id; a fresh one avoids "Session ID is already in use".
      this.state.providerSessionId = randomUUID();
    }
    const turn = this.state.turn;
    if (!turn || released) return;
    const pending = this.unacknowledged;
    if (
      pending &&
      !pending.retried &&
      ending.kind === 'exited' &&
      !this.stopped &&
      (this.stopReason === null || this.stopReason === 'idle')
    ) {
      // The process died before it said anything about this turn (e.g. it had just exited while
      // idle): the input never reached the conversation, so send it once more to a new process;
      // unless it was asked to stop meanwhile: sent again, it would run unstopped.
      if (turn.interruptRequested) return this.endTurn(turn, { outcome: 'interrupted' });
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

  /**
   * A spare refused the claim, or ended before answering it: the spare goes, the session never takes
   * another, and its turn (which the spare never ran) starts cold, with a diagnostic saying why.
   * An end the session asked for (it is closing) is an end like any other.
   */
  protected async onClaimRefused(connection: ClaudeConnection, refusal: ClaimRefusal): Promise<void> {
    if (this.connection !== connection) return;
    if (refusal.ending && (this.stopped || this.stopReason !== null)) return this.onEnd(refusal.ending);
    // A closing session's stop of the spare is already under way.
    if (this.stopped) return;
    this.spareRefused = true;
    this.note(`claude.spare_claim_refused.${refusal.reason}`);
    await connection.stop({ busy: false, force: true });
    if (this.connection !== connection) return;
    this.connection = null;
    this.emit({ type: 'session.process_stopped', reason: 'released' });
    // Nothing was recorded under the spare's id; a fresh one, as after any start that came to nothing.
    if (!this.state.conversationEstablished) this.state.providerSessionId = randomUUID();
    const turn = this.state.turn;
    const pending = this.unacknowledged;
    if (!turn || !pending || this.stopped) return;
    if (turn.interruptRequested) return this.endTurn(turn, { outcome: 'interrupted' });
    this.state.turn = null;
    try {
      await this.send(pending.turn, pending.control);
    } catch (error) {
      // The cold start failed as a first start fails (e.g. the binary cannot be run): the run ends with its error.
      this.emit({ type: 'run.completed', runId: turn.runId, outcome: 'failed', error: toAgentError(error).toObject() });
    }
  }

  /** Sends a stop again to a turn it missed (stopOnceStarted). */
  protected abstract stopAgain(turn: ActiveTurn): void;

  /** Hands a turn to the agent (starting one when none runs). */
  protected abstract send(turn: AgentProviderV1Turn, control?: string): Promise<void>;
}

/**
 * The end of a run that went on for a steered input: the host's own turn failed before the steer's
 * turn succeeded, so the run failed, with that turn's error, though the steer was answered. Taking
 * the last turn's success for the run's hid the failure of what the host asked.
 */
function withHeldFailure(
  part: Extract<AgentProviderV1Part, { type: 'run.completed' }>,
  held: readonly AgentProviderV1Part[] | null,
): Extract<AgentProviderV1Part, { type: 'run.completed' }> {
  const failed = held?.find(
    (candidate): candidate is Extract<AgentProviderV1Part, { type: 'run.completed' }> =>
      candidate.type === 'run.completed' && candidate.runId === part.runId && candidate.outcome === 'failed',
  );
  if (!failed || part.outcome !== 'succeeded') return part;
  return { ...part, outcome: 'failed', ...(failed.error ? { error: failed.error } : {}) };
}
