import {
  AgentError,
  type InputDelivery,
  type PermissionMode,
  type ProtocolEvent,
  type SessionSnapshot,
  type SubmitTurnReceipt,
} from '@tether/protocol';
import { type ShutdownSignal, signalExitCode } from '@tether/runtime';
import type { CliContext } from '../cli-context.js';
import { InteractionResponder, type ResponderMode } from '../interactions/interaction-responder.js';
import { HumanRenderer, type Output } from '../render/human-renderer.js';
import { JsonRenderer } from '../render/json-renderer.js';
import { describeWorktree } from '../render/workspace-summary.js';
import { exitCodeForRun, runTurn } from '../run-turn.js';
import type { TetherBackend } from '../tether-backend.js';
import type { TurnAttachments } from './attachment-options.js';
import { checkResumeWorkspace } from './resume-workspace.js';
import { closeReopened, discardSession } from './session-cleanup.js';

/** Where a worktree session's branch starts and what it is called (both optional). */
export interface WorktreeRequest {
  readonly baseRef?: string;
  readonly branch?: string;
}

export interface TurnRequest {
  /** Continue this session; otherwise a new one is opened in `cwd`. */
  readonly resume?: string | undefined;
  /** With `resume`: refuse (usage error, nothing changed) unless the session's workspace is this directory. */
  readonly resumeCwd?: string | undefined;
  readonly cwd: string;
  /** A new session in a new git worktree of the repository at `cwd` (instead of `cwd` itself). */
  readonly worktree?: WorktreeRequest | undefined;
  readonly model?: string | undefined;
  readonly permissionMode?: PermissionMode | undefined;
  readonly prompt: string;
  /** Images and file references sent with the prompt. */
  readonly attachments?: TurnAttachments | undefined;
  readonly json: boolean;
  /** While a run is active: queue the turn (after_turn) or steer it into the running turn; without it, run_active. */
  readonly delivery?: InputDelivery | undefined;
  /** How prompts are answered; `null` when the provider itself denies them. */
  readonly responder: ResponderMode | null;
  /** In-process: the runtime's waitForRun, whose store_failure ends the turn when its end cannot be stored. */
  readonly runEnd?: (runId: string) => Promise<unknown>;
  /**
   * Said just before the turn is sent, once the session is open and its settings changed: a warning
   * about how the turn will go (nobody to ask) is not printed above a refusal of the turn itself.
   */
  readonly beforeSending?: () => void;
}

/** How long a run gets to end on its own after SIGTERM or SIGHUP before everything is killed. */
export const signalGraceMs = 1_000;
/** The last resort: exit this long after a terminating signal whatever is still running. */
export const signalDeadlineMs = 3_000;
/**
 * How long a run gets to end after a first Ctrl-C before it is ended like SIGTERM ends it: an agent
 * that answers stops in milliseconds; one that is wedged (a hung start-up, a CLI that never answers
 * the stop) would otherwise hold the terminal for the interrupt request's whole timeout.
 */
export const interruptSettleMs = 1_000;

/** The session a command's turn is in, and how to stop that turn alone. */
export interface TurnOfCommand {
  readonly sessionId: string;
  /**
   * Stops this command's own turn once it is accepted: a follow-up still waiting is withdrawn; its
   * run is interrupted by id; a steer folded into another caller's run stops nothing (that run is
   * not this command's).
   */
  stop(): Promise<TurnStopped>;
}

/** What stopping a command's turn did: its waiting input withdrawn, its run interrupted, or nothing of its own to stop. */
export type TurnStopped = 'withdrawn' | 'interrupted' | 'nothing';

/** How a command ends everything it started when it must exit (a terminating or a second signal). */
export interface TurnStopper {
  /**
   * Ends the run and whatever this command started, bounded in time; `urgent` (a second signal)
   * skips the grace. driveTurn then returns `signal`'s exit code. `turn`: the session, and how to
   * stop this command's turn alone (another caller's run in the session is not this command's to stop).
   */
  terminate(signal: ShutdownSignal, turn: TurnOfCommand | undefined, urgent: boolean): void;
  /**
   * Told when a first Ctrl-C has stopped the run and driveTurn is returning. A second Ctrl-C until
   * this process exits still closes the session (docs/cli.md), but driveTurn no longer hears it:
   * the command does, as it alone knows whether its backend still takes a command then (an
   * in-process runtime shutting down does not).
   */
  interruptedByUser?(sessionId: string): void;
  /**
   * Told when a signal ended the command after it opened a session for its turn and before the turn
   * went in: the session holds nothing of the user's, and goes as a refused turn's does (once the
   * backend takes commands again: an in-process runtime shutting down does not).
   */
  discardUnused?(sessionId: string): Promise<void>;
  /**
   * Told when a signal ended the command after it reopened a closed session for its turn and before
   * the turn went in: the session is closed again, as it was (once the backend takes commands again).
   */
  closeUnused?(sessionId: string): Promise<void>;
}

/**
 * One turn as the `tether` commands run it, in-process or through a daemon: open or resume the
 * session, stream the events to the renderer, answer prompts, print the summary. Ctrl-C stops the
 * run (exit 130); a second Ctrl-C also closes the session. SIGTERM and SIGHUP (a supervisor, a
 * closed terminal) stop the run too and then exit 143 / 129; a second signal of any kind after one
 * of those, or a run that does not settle within the grace, ends everything at once.
 */
export async function driveTurn(
  backend: TetherBackend,
  request: TurnRequest,
  context: CliContext,
  stopper: TurnStopper,
): Promise<number> {
  let sessionId: string | undefined;
  // A follow-up not yet started or folded in: stopping withdraws it rather than stop another turn's run.
  let pendingInput: string | null = null;
  // This turn's receipt, once accepted: a stop names its run, so a run of another caller that started
  // since (a follow-up queued behind this turn, the run a steer went into) is not stopped in its place.
  let accepted: (receipt: SubmitTurnReceipt) => void = () => {};
  const receiptOfTurn = new Promise<SubmitTurnReceipt>((resolve) => {
    accepted = resolve;
  });
  const stopTurn = async (session: string): Promise<TurnStopped> => {
    const receipt = await receiptOfTurn;
    const input = receipt.queued === true ? receipt.inputId : undefined;
    if (input !== undefined) {
      const withdrawn =
        pendingInput === input &&
        (await backend.cancelQueuedInput({ sessionId: session, inputId: input }).then(
          () => true,
          () => false,
        ));
      if (withdrawn) return 'withdrawn';
      // Folded in, it belongs to another caller's run now.
      if (request.delivery === 'steer') return 'nothing';
    }
    // This turn's run (an after_turn input's once it started): by its id, never another's.
    await backend.interruptRun({ sessionId: session, runId: receipt.runId });
    return 'interrupted';
  };
  const turnOf = (session: string | undefined): TurnOfCommand | undefined =>
    session === undefined ? undefined : { sessionId: session, stop: () => stopTurn(session) };
  const withdrawPending = (session: string, inputId: string) =>
    backend.cancelQueuedInput({ sessionId: session, inputId }).then(
      () => undefined,
      () => undefined,
    );
  let responder: InteractionResponder | null = null;
  // The signal this command exits for, once it has to exit (set from the signal handlers).
  const stop: { ending: ShutdownSignal | null } = { ending: null };
  let unsettledInterrupt: NodeJS.Timeout | undefined;
  // A first Ctrl-C stopped the run (the session stays), or a second one is closing it.
  let interrupted: 'run' | 'session' | null = null;
  // --answers could not be read: the run is stopped and the command fails.
  let answersFailed = false;
  const terminate = (signal: ShutdownSignal, urgent: boolean) => {
    stop.ending ??= signal;
    const ending = stop.ending;
    if (pendingInput === null || sessionId === undefined || urgent)
      return stopper.terminate(ending, turnOf(sessionId), urgent);
    const turn = turnOf(sessionId);
    void withdrawPending(sessionId, pendingInput).finally(() => stopper.terminate(ending, turn, urgent));
  };
  // The turn was a steer already folded into another caller's run: nothing here is this command's to
  // stop, so it detaches at once (its run goes on, and no second Ctrl-C can close that caller's session).
  const leaveOthersRun = (signal: ShutdownSignal) => {
    clearTimeout(unsettledInterrupt);
    interrupted = null;
    context.stderr.write("\n■ the steer went into another caller's run: leaving that run to them\n");
    terminate(signal, true);
  };
  const removeInterrupt = context.onInterrupt((count, signal) => {
    // Whatever the signal and however the run goes on stopping, this process ends: something left
    // holding it (a wedged agent, a source still open) must not keep it past the deadline.
    context.exitAfter(signalDeadlineMs, signalExitCode(stop.ending ?? signal));
    if (stop.ending !== null) {
      context.stderr.write('\n■ second signal: stopping now\n');
      return terminate(signal, true);
    }
    // Before the turn is sent (the session still opening, a resumed one still changing its model or
    // mode) there is no run to stop: the turn is not sent, and the command ends.
    if (signal !== 'SIGINT' || sessionId === undefined || !sending) {
      context.stderr.write(`\n■ ${signal}: stopping the run and exiting…\n`);
      return terminate(signal, false);
    }
    if (count === 1) {
      // A follow-up still waiting is withdrawn (or, if it started meanwhile, its run stopped); a steer
      // folded in meanwhile is left to the run it joined.
      const queued = pendingInput !== null;
      // A steer already taken into another caller's run: nothing here stops that run (leaveOthersRun says so).
      const othersRun = !queued && steeredIn;
      if (!othersRun)
        context.stderr.write(
          queued
            ? '\n■ withdrawing the queued follow-up…\n'
            : '\n■ stopping the run (Ctrl-C again closes the session)…\n',
        );
      stopTurn(sessionId).then(
        (stopped) => {
          if (stopped === 'nothing') leaveOthersRun(signal);
        },
        () => terminate(signal, false),
      );
      if (queued || othersRun) return;
      interrupted = 'run';
      unsettledInterrupt = setTimeout(() => {
        context.stderr.write('\n■ the run did not stop in time: ending it now\n');
        terminate(signal, false);
      }, interruptSettleMs);
    } else if (count === 2) {
      context.stderr.write('\n■ closing the session…\n');
      interrupted = 'session';
      const closing = sessionId;
      backend
        .closeSession({ sessionId: closing })
        .catch(() => undefined)
        .finally(() => terminate(signal, true));
    }
  });
  /** A session this command opened, until its first turn is accepted. */
  let openedForTurn: string | null = null;
  /** A closed session this command reopened for its turn. */
  let reopenedForTurn: string | null = null;
  /** The model and mode a resumed session had, while --model or --permission-mode changed them for a turn not yet accepted. */
  let settingsBefore: SettingsBefore | null = null;
  /** The turn is being sent (a signal then stops its run), and once it is accepted. */
  let sending = false;
  let submitted = false;
  /** The turn was a steer handed into the running run (another caller's): not this command's to stop. */
  let steeredIn = false;
  try {
    let afterSeq = 0;
    // A git worktree tells each run's changed files after the run: the turn waits for them.
    let worktreeSession = request.worktree !== undefined;
    /** Follow-ups held by the plan limit when this turn was sent: a turn sent then runs at once, ahead of them. */
    let heldFollowUps = 0;
    if (request.resume !== undefined) {
      const snapshot = await backend.getSession(request.resume);
      heldFollowUps = (snapshot.queuedInputs ?? []).filter((input) => input.held !== undefined).length;
      worktreeSession = snapshot.workspace.kind === 'git_worktree';
      if (request.resumeCwd !== undefined) await checkResumeWorkspace(snapshot, request.resumeCwd);
      afterSeq = snapshot.lastSeq;
      await backend.openSession({ continueSession: request.resume });
      sessionId = request.resume;
      if (snapshot.state === 'closed') reopenedForTurn = sessionId;
      // A model retired since, or a mode to change: the session's own settings, changed from this turn on.
      // Not while another caller's run goes on: the turn is refused (run_active), and the change would
      // have reached that run.
      const changing = request.model !== undefined || request.permissionMode !== undefined;
      if (changing && (snapshot.activeRunId === null || request.delivery !== undefined)) {
        const before = settingsOf(snapshot, request);
        const modelOnly = { model: before.model, permissionMode: undefined };
        // Put back each change once it is asked for (a signal may land while it applies), but not one
        // the daemon refused: that changed nothing, and putting it "back" would record a change.
        settingsBefore = modelOnly;
        if (request.model !== undefined)
          await unlessRefused(backend.setModel({ sessionId, model: request.model }), () => {
            settingsBefore = null;
          });
        settingsBefore = before;
        if (request.permissionMode !== undefined)
          await unlessRefused(
            backend.setPermissionMode({ sessionId, mode: request.permissionMode, restart: true }),
            () => {
              settingsBefore = modelOnly;
            },
          );
      }
    } else {
      const opened = await backend.openSession({
        workspace: request.worktree
          ? { kind: 'git_worktree', repository: request.cwd, ...request.worktree }
          : { kind: 'directory', path: request.cwd },
        ...(request.model !== undefined ? { model: request.model } : {}),
        ...(request.permissionMode !== undefined ? { permissionMode: request.permissionMode } : {}),
      });
      sessionId = opened.sessionId;
      openedForTurn = sessionId;
    }
    const mode = request.responder;
    const held = (output: Output) => (mode?.kind === 'terminal' ? mode.prompter.heldWhilePrompting(output) : output);
    const renderer = request.json
      ? new JsonRenderer(context.stdout)
      : new HumanRenderer(held(context.stdout), held(context.stderr), {
          promptsShownElsewhere: mode?.kind === 'terminal',
          spinner: context.terminal !== undefined,
        });
    const turnSession = sessionId;
    // Once --answers cannot be read, what it was to answer cannot be: the run stops rather than go
    // on with its prompts denied (a follow-up still queued is withdrawn), once there is one to stop.
    const stopForAnswers = () => {
      if (pendingInput !== null) void withdrawPending(turnSession, pendingInput);
      else stopTurn(turnSession).catch(() => undefined);
    };
    // This turn's run, once submitted: another caller's run (a follow-up queued behind this turn)
    // and its inputs are not this turn's, so they are neither shown nor answered here (--json
    // still prints every event of the session, as documented).
    let turnRunId: string | null = null;
    responder = mode
      ? new InteractionResponder({
          runtime: backend,
          sessionId,
          mode,
          stderr: context.stderr,
          onAnswersFailed: () => {
            answersFailed = true;
            if (submitted) stopForAnswers();
          },
        })
      : null;
    const activeResponder = responder;
    const sink = {
      event(event: ProtocolEvent) {
        const ofThisTurn = turnRunId === null || !('runId' in event) || event.runId === turnRunId;
        if (ofThisTurn || request.json) renderer.event(event);
        if (!ofThisTurn) return;
        // A steer taken into another caller's run: with nobody here to ask, that run's prompts are its
        // caller's to answer (as a watcher leaves them, docs/cli.md), never denied from here.
        const leftToCaller = steeredIn && mode?.kind === 'deny' && mode.chosen !== true;
        if (event.type === 'interaction.requested' && !leftToCaller) activeResponder?.onRequested(event);
        if (
          event.type === 'interaction.settled' ||
          event.type === 'interaction.withdrawn' ||
          event.type === 'interaction.cancelled'
        )
          activeResponder?.onOver(event.interactionRef);
        const ended =
          event.type === 'input.started' || event.type === 'input.folded' || event.type === 'input.cancelled';
        if (ended && event.inputId === pendingInput) pendingInput = null;
      },
    };
    // A signal came while the session was being opened or resumed: the turn is not sent, and a
    // session opened for it goes again (named, in case the signal's deadline ends this process first).
    if (stop.ending !== null) {
      if (settingsBefore !== null) await restoreSettings(backend, sessionId, settingsBefore);
      if (openedForTurn !== null) {
        context.stderr.write(`■ the turn was not sent; deleting the session ${openedForTurn} opened for it\n`);
        await stopper.discardUnused?.(openedForTurn);
      } else if (reopenedForTurn !== null) {
        context.stderr.write(`■ the turn was not sent; closing the session ${reopenedForTurn} again\n`);
        await stopper.closeUnused?.(reopenedForTurn);
      }
      return signalExitCode(stop.ending);
    }
    request.beforeSending?.();
    sending = true;
    const run = await runTurn(backend, {
      filesChanged: worktreeSession,
      sessionId,
      prompt: request.prompt,
      ...(request.attachments ? { attachments: request.attachments } : {}),
      afterSeq,
      sink,
      ...(request.delivery ? { delivery: request.delivery } : {}),
      ...(request.runEnd ? { runEnd: request.runEnd } : {}),
      onSubmitted: (receipt) => {
        turnRunId = receipt.runId;
        if (renderer instanceof HumanRenderer) renderer.turnAccepted(receipt.inputId ?? null);
        // Not queued behind follow-ups the plan limit holds (the API answers it now), with or without a
        // delivery (docs/protocol.md, "Held by the plan limit"): said, as it goes out of order.
        if (receipt.queued !== true && heldFollowUps > 0 && !request.json)
          context.stderr.write(
            `  · runs now, ahead of ${heldFollowUps === 1 ? 'the follow-up' : `the ${heldFollowUps} follow-ups`} held by the plan limit (${heldFollowUps === 1 ? 'it waits' : 'they wait'} for its reset)\n`,
          );
        // A steer that found no run to go into (it had just ended) runs as a turn of its own: said, as no
        // "sent into the running turn" follows.
        if (request.delivery === 'steer' && receipt.queued !== true && !request.json)
          context.stderr.write('  · nothing was running to steer: it runs as a turn of its own\n');
        if (receipt.queued === true && receipt.inputId !== undefined) pendingInput = receipt.inputId;
        steeredIn = receipt.queued === true && request.delivery === 'steer';
        accepted(receipt);
        submitted = true;
        if (answersFailed) stopForAnswers();
      },
    });
    if (renderer instanceof HumanRenderer) {
      renderer.summary(run, sessionId);
      // Informational: a backend stopping under a signal must not turn the run's outcome into an error.
      if (stop.ending === null) await reportWorktree(backend, sessionId, context).catch(() => undefined);
    }
    if (stop.ending !== null) return signalExitCode(stop.ending);
    return answersFailed && run.outcome !== 'succeeded' ? 1 : exitCodeForRun(run);
  } catch (error) {
    // A turn that never went in changes nothing: the resumed session gets back its model and mode.
    if (settingsBefore !== null && !submitted && sessionId !== undefined)
      await restoreSettings(backend, sessionId, settingsBefore);
    // Stopping mid-way (the runtime shut down under an open or a submit): the signal decides the code.
    if (stop.ending !== null) {
      if (openedForTurn !== null && !submitted) await stopper.discardUnused?.(openedForTurn);
      if (reopenedForTurn !== null && !submitted) await stopper.closeUnused?.(reopenedForTurn);
      return signalExitCode(stop.ending);
    }
    // The turn itself was refused (a bad image, a file outside the workspace): the session opened
    // for it holds nothing, so it goes too, and one reopened for it is closed again: bad input
    // leaves nothing changed.
    if (openedForTurn !== null && isTurnRefusal(error)) await discardSession(backend, openedForTurn);
    if (reopenedForTurn !== null && !submitted && isTurnRefusal(error)) await closeReopened(backend, reopenedForTurn);
    throw error;
  } finally {
    clearTimeout(unsettledInterrupt);
    removeInterrupt();
    responder?.close();
    if (interrupted === 'run' && stop.ending === null && sessionId !== undefined)
      stopper.interruptedByUser?.(sessionId);
  }
}

/** After a worktree session's turn: where its work is and how to look at it (nothing for a plain directory). */
async function reportWorktree(backend: TetherBackend, sessionId: string, context: CliContext): Promise<void> {
  const snapshot = await backend.getSession(sessionId);
  const worktree = describeWorktree(snapshot.workspaceStatus);
  if (worktree === null) return;
  const open = snapshot.state !== 'closed';
  context.stderr.write(
    `  ${worktree}${open ? '; kept while the session is open' : ''}\n` +
      `  review: tether diff ${sessionId}${open ? ` · close: tether close ${sessionId} (keeps the worktree if it holds work)` : ''}\n`,
  );
}

/** What --model and --permission-mode replace, to be put back if the turn never goes in. */
interface SettingsBefore {
  readonly model: string | undefined;
  readonly permissionMode: PermissionMode | undefined;
}

function settingsOf(
  snapshot: SessionSnapshot,
  request: { readonly model?: string; readonly permissionMode?: PermissionMode },
): SettingsBefore {
  const configured = snapshot.configuration;
  return {
    // The model it was opened or last set with ("default": the provider's own), as set_model takes it.
    model:
      request.model === undefined ? undefined : typeof configured.model === 'string' ? configured.model : 'default',
    // The mode in effect; never reported yet, the agent's own default (asking before edits), never a wider one.
    permissionMode: request.permissionMode === undefined ? undefined : (snapshot.permissionMode ?? 'ask_before_edit'),
  };
}

/**
 * A settings change the daemon (or the runtime in-process) answered with a refusal: nothing changed.
 * Not one that got no answer (runtime_stopped: unreachable, timed out), which may have been applied.
 */
function refusedChange(error: unknown): boolean {
  return AgentError.isInstance(error) && error.code !== 'runtime_stopped';
}

/** Waits for `change`; when it was refused (refusedChange), calls `onRefused` before the refusal goes on. */
async function unlessRefused(change: Promise<unknown>, onRefused: () => void): Promise<void> {
  try {
    await change;
  } catch (error) {
    if (refusedChange(error)) onRefused();
    throw error;
  }
}

/** Best effort, as a discard is: the refusal or the signal is what the user needs to see. */
async function restoreSettings(backend: TetherBackend, sessionId: string, before: SettingsBefore): Promise<void> {
  try {
    if (before.model !== undefined) await backend.setModel({ sessionId, model: before.model });
    if (before.permissionMode !== undefined)
      await backend.setPermissionMode({ sessionId, mode: before.permissionMode, restart: true });
  } catch {
    // Left as the command changed them; the session's own snapshot says so.
  }
}

function isTurnRefusal(error: unknown): boolean {
  return AgentError.isInstance(error) && (error.code === 'invalid_command' || error.code === 'capability_unsupported');
}
